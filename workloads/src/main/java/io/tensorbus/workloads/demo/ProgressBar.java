package io.tensorbus.workloads.demo;

import java.io.PrintStream;
import java.util.Locale;

/**
 * A one-line progress bar redrawn in place with a carriage return, as tqdm-style training loops show; drawn
 * only on a terminal, so that logs and pipes get just the per-epoch lines.
 */
final class ProgressBar {
    private static final int WIDTH = 30;

    private ProgressBar() {
    }

    private static boolean drawn(PrintStream out) {
        return out == System.out && System.console() != null;
    }

    static void show(PrintStream out, int epoch, int epochs, int done, int total, double loss) {
        if (!drawn(out)) {
            return;
        }
        int filled = total == 0 ? WIDTH : (int) ((long) WIDTH * done / total);
        out.printf(Locale.ROOT, "\repoch %d/%d [%s%s] %d/%d  loss %.4f", epoch, epochs, "#".repeat(filled),
                ".".repeat(WIDTH - filled), done, total, loss);
        out.flush();
    }

    static void finish(PrintStream out) {
        if (!drawn(out)) {
            return;
        }
        out.print("\r" + " ".repeat(WIDTH + 50) + "\r");
    }
}
