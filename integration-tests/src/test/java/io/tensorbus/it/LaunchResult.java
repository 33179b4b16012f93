package io.tensorbus.it;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.tensorbus.workloads.cli.Launcher;
import io.tensorbus.workloads.cli.Main;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.List;

/**
 * What a {@code tensorbus launch} run in this JVM ({@link Launcher#run}) returned and printed; its
 * {@link #toString()} is the whole report for an assertion message.
 *
 * @param code the launcher's exit status
 * @param out the ranks' standard output, each line prefixed with {@code [rank R] }
 * @param err the ranks' standard error and the launcher's own lines
 */
record LaunchResult(int code, String out, String err) {
    /** Runs the launcher with {@code args} (the words after {@code tensorbus launch}). */
    static LaunchResult launch(String... args) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int code = Launcher.run(List.of(args), new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8));
        return new LaunchResult(code, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
    }

    /** Runs the {@code tensorbus} command line with {@code args} (the words after {@code tensorbus}). */
    static LaunchResult tensorbus(String... args) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int code = Main.run(args, new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8));
        return new LaunchResult(code, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
    }

    /** This result, once asserted to have exit status 0 (the whole report otherwise). */
    LaunchResult succeeded() {
        assertEquals(0, code, toString());
        return this;
    }

    @Override
    public String toString() {
        return "exit " + code + "\n--- stdout\n" + out + "--- stderr\n" + err;
    }
}
