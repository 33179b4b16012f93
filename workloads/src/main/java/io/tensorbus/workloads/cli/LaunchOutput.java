package io.tensorbus.workloads.cli;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;

/**
 * Copies one child stream to the launcher's stream line by line with a {@code [rank R] } prefix, as
 * torchrun's log prefix does, on a virtual thread of its own.
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
        return Thread.ofVirtual().name(name).start(() -> copy(in, sink, prefix));
    }

    private static void copy(InputStream in, PrintStream sink, String prefix) {
        try (BufferedReader r = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8))) {
            for (String line = r.readLine(); line != null; line = r.readLine()) {
                sink.println(prefix + line);
            }
        } catch (IOException e) {
            // The pipe closes under us when the child is killed; what was read was forwarded.
        }
        sink.flush();
    }
}
