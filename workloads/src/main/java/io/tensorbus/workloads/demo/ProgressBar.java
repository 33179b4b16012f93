package io.tensorbus.workloads.demo;

import java.io.PrintStream;
import java.util.Locale;

/**
 * A one-line progress bar redrawn in place, as tqdm-style training loops show; drawn only when the output
 * ends up on a terminal, so that logs and pipes get just the per-epoch lines.
 *
 * <p>Each frame ends with a carriage return (rather than starting with one), so that a process whose output
 * {@code tensorbus launch} forwards can be drawn too: the launcher passes a frame on as soon as its carriage
 * return arrives, and tells its children through {@link #TERMINAL_ENV} that its own output is a terminal.
 */
public final class ProgressBar {
    /**
     * The environment variable ({@code 1}) by which {@code tensorbus launch} tells a child that the output it
     * forwards goes to a terminal, though the child itself writes to a pipe.
     */
    public static final String TERMINAL_ENV = "TENSORBUS_TERMINAL";

    private static final int WIDTH = 30;

    private ProgressBar() {
    }

    /** True when frames written to {@code out} reach a terminal: this JVM's, or its launcher's. */
    private static boolean drawn(PrintStream out) {
        return out == System.out && (System.console() != null || "1".equals(System.getenv(TERMINAL_ENV)));
    }

    /**
     * Draws the bar of batch {@code done} of {@code total} in epoch {@code epoch} of {@code epochs}, with the
     * running mean loss; does nothing when {@code out} is not a terminal.
     */
    public static void show(PrintStream out, int epoch, int epochs, int done, int total, double loss) {
        if (!drawn(out)) {
            return;
        }
        int filled = total == 0 ? WIDTH : (int) ((long) WIDTH * done / total);
        out.printf(Locale.ROOT, "epoch %d/%d [%s%s] %d/%d  loss %.4f\r", epoch, epochs, "#".repeat(filled),
                ".".repeat(WIDTH - filled), done, total, loss);
        out.flush();
    }

    /** Blanks the bar, so that the next line is written over it; does nothing when not drawn. */
    public static void finish(PrintStream out) {
        if (!drawn(out)) {
            return;
        }
        // Wider than a frame plus the launcher's "[rank R] " prefix.
        out.print(" ".repeat(WIDTH + 60) + "\r");
        out.flush();
    }
}
