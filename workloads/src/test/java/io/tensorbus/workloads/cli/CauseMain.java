package io.tensorbus.workloads.cli;

import io.tensorbus.c10d.PeerLostException;
import io.tensorbus.distributed.Distributed;
import io.tensorbus.internal.distributed.ProcessExit;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * A child for {@link LauncherTest} of two ranks where the rank that fails first is not the one to blame, or is
 * still ending when the other's exit is seen. Rank 0 throws from {@code main} and then takes two seconds to end
 * (a shutdown hook of its own); rank 1 waits for rank 0's error file, then exits with status 9. Mode
 * {@code lost-peer}: rank 0's exception came from losing a peer, so rank 1 is the cause. Mode {@code own}: rank
 * 0's is a failure of its own, so rank 0 is the cause, with its own exit status 1 though it ended last.
 */
public final class CauseMain {
    private CauseMain() {
    }

    /** {@code args[0]}: {@code lost-peer} or {@code own}. */
    public static void main(String[] args) throws Exception {
        // Installs the handler that writes the error file, as every tensorbus program does.
        Distributed.newVertx().close();
        Path mine = Path.of(System.getenv(ProcessExit.ERROR_FILE_ENV));
        if (System.getenv("RANK").equals("0")) {
            Runtime.getRuntime().addShutdownHook(new Thread(CauseMain::sleepTwoSeconds));
            if (args[0].equals("lost-peer")) {
                throw new IllegalStateException("step 2 failed", new PeerLostException("default", 2, 1,
                        "lost rank 1 on rank 0: the connection closed", null));
            }
            throw new IllegalStateException("rank 0 gives up");
        }
        Path rankZero = mine.resolveSibling("rank-0.error");
        long deadline = System.nanoTime() + 60_000_000_000L;
        while (!(Files.exists(rankZero) && Files.size(rankZero) > 0) && System.nanoTime() < deadline) {
            Thread.sleep(10);
        }
        // Later than rank 0's error by more than a file system's time stamp granularity.
        Thread.sleep(100);
        System.exit(9);
    }

    private static void sleepTwoSeconds() {
        try {
            Thread.sleep(2000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
