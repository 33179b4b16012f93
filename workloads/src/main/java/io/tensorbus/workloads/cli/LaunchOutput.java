package io.tensorbus.workloads.cli;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
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

    /**
     * A stream that prints to {@code sink} what is written to it, each line prefixed with {@code prefix} as a child's
     * output is: for the ranks that run as threads of one JVM ({@link RankThreads}), whose output has no pipe of its
     * own. Thread-safe; closing it passes on an unfinished last line.
     */
    static PrintStream prefixed(PrintStream sink, String prefix) {
        return new PrintStream(new Lines(new Tee(sink, null, prefix)), true, StandardCharsets.UTF_8);
    }

    private static void copy(InputStream in, Tee sink) {
        byte[] chunk = new byte[8192];
        try (Lines lines = new Lines(sink)) {
            for (int n = in.read(chunk); n >= 0; n = in.read(chunk)) {
                lines.write(chunk, 0, n);
            }
        } catch (IOException e) {
            // The pipe closes under us when the child is killed; what was read was forwarded.
        }
    }

    /**
     * Splits UTF-8 bytes into lines for a {@link Tee}. A carriage return followed by a line feed ends a line as the
     * line feed alone does; one that ends a write passes the text on as a frame to be overwritten by the next, since
     * a CRLF arrives in one write while a frame's CR is the last byte written.
     */
    private static final class Lines extends OutputStream {
        private final Tee sink;
        private final ByteArrayOutputStream line = new ByteArrayOutputStream();
        private boolean carriageReturn;

        Lines(Tee sink) {
            this.sink = sink;
        }

        @Override
        public synchronized void write(int b) {
            write(new byte[] {(byte) b}, 0, 1);
        }

        @Override
        public synchronized void write(byte[] bytes, int off, int len) {
            for (int i = off; i < off + len; i++) {
                byte c = bytes[i];
                if (carriageReturn) {
                    carriageReturn = false;
                    if (c == '\n') {
                        sink.line(text());
                        continue;
                    }
                    frame();
                }
                if (c == '\n') {
                    sink.line(text());
                } else if (c == '\r') {
                    carriageReturn = true;
                } else {
                    line.write(c);
                }
            }
            if (carriageReturn) {
                carriageReturn = false;
                frame();
            }
        }

        private void frame() {
            if (line.size() > 0) {
                sink.frame(text());
            }
        }

        private String text() {
            String text = line.toString(StandardCharsets.UTF_8);
            line.reset();
            return text;
        }

        @Override
        public synchronized void close() {
            if (line.size() > 0) {
                sink.line(text());
            }
            sink.flush();
        }
    }
}
