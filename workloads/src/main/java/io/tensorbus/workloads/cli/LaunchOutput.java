package io.tensorbus.workloads.cli;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Copies one child stream to the launcher's stream line by line with a {@code [rank R] } prefix, as
 * torchrun's log prefix does, on a virtual thread of its own.
 *
 * <p>A text ended by a lone carriage return (a progress-bar frame, see
 * {@link io.tensorbus.workloads.demo.ProgressBar}) is passed on at once with its prefix and its carriage
 * return, so that the next frame overwrites it on the terminal; a carriage return followed by a line feed
 * ends a line as the line feed alone does.
 */
final class LaunchOutput {
    private LaunchOutput() {
    }

    /**
     * Starts copying until the stream ends (the child and any process it started closed it).
     *
     * @param in the child's stdout or stderr, read as UTF-8 (children are started with UTF-8 output)
     * @param sink where prefixed lines go; each line is one {@code println} call, which a
     *     {@link PrintStream} makes atomic, so lines of different ranks never mix mid-line
     * @param prefix written before each line
     * @param name the thread name, for thread dumps
     * @return the copying thread
     */
    static Thread forward(InputStream in, PrintStream sink, String prefix, String name) {
        return forward(in, sink, prefix, null, name);
    }

    /**
     * As {@link #forward(InputStream, PrintStream, String, String)}, with {@code sink} null for no console output
     * and the lines (without prefix or progress-bar frames) also written to {@code file} when it is not null (its
     * folders are made; a file that cannot be written is reported once on the console and left).
     */
    static Thread forward(InputStream in, PrintStream sink, String prefix, Path file, String name) {
        return Thread.ofVirtual().name(name).start(() -> {
            PrintStream log = open(file, sink, prefix);
            try {
                copy(in, new Tee(sink, log, prefix));
            } finally {
                if (log != null) {
                    log.close();
                }
            }
        });
    }

    private static PrintStream open(Path file, PrintStream sink, String prefix) {
        if (file == null) {
            return null;
        }
        try {
            Files.createDirectories(file.getParent());
            return new PrintStream(Files.newOutputStream(file), true, StandardCharsets.UTF_8);
        } catch (IOException e) {
            if (sink != null) {
                sink.println(prefix + "tensorbus launch: cannot write the log file " + file + ": " + e);
            }
            return null;
        }
    }

    /** The console (with the rank's prefix) and the log file (without), either absent. */
    private record Tee(PrintStream console, PrintStream file, String prefix) {
        void line(CharSequence text) {
            if (console != null) {
                console.println(prefix + text);
            }
            if (file != null) {
                file.println(text);
            }
        }

        void frame(CharSequence text) {
            if (console != null) {
                console.print(prefix + text + "\r");
                console.flush();
            }
        }

        void flush() {
            if (console != null) {
                console.flush();
            }
            if (file != null) {
                file.flush();
            }
        }
    }

    private static void copy(InputStream in, Tee sink) {
        StringBuilder line = new StringBuilder();
        try (BufferedReader r = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8))) {
            for (int c = r.read(); c >= 0; c = r.read()) {
                if (c == '\n') {
                    sink.line(line);
                    line.setLength(0);
                } else if (c == '\r') {
                    carriageReturn(r, sink, line);
                } else {
                    line.append((char) c);
                }
            }
        } catch (IOException e) {
            // The pipe closes under us when the child is killed; what was read was forwarded.
        }
        if (!line.isEmpty()) {
            sink.line(line);
        }
        sink.flush();
    }

    /** A CRLF ends the line; a lone CR passes the text on as a frame to be overwritten by the next. */
    private static void carriageReturn(BufferedReader r, Tee sink, StringBuilder line) throws IOException {
        // A CRLF arrives in one write, so its LF is already readable; a frame's CR is the last byte written.
        if (r.ready()) {
            r.mark(1);
            if (r.read() == '\n') {
                sink.line(line);
                line.setLength(0);
                return;
            }
            r.reset();
        }
        if (!line.isEmpty()) {
            sink.frame(line);
            line.setLength(0);
        }
    }
}
