package io.tensorbus.workloads.cli;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * A child for {@link LauncherTest}. Every rank but 1 writes its pid to {@code DIR/pid-RANK} and sleeps ten
 * minutes; rank 1 waits (up to 60 s) until all the other ranks' pid files exist, then exits with status 3.
 * With the argument {@code never-fail} no rank fails: they all sleep (for the timeout test).
 */
public final class FailingMain {
    private FailingMain() {
    }

    /** {@code args[0]}: the directory for pid files; {@code args[1]} optional: {@code never-fail}. */
    public static void main(String[] args) throws IOException, InterruptedException {
        Path dir = Path.of(args[0]);
        int rank = Integer.parseInt(System.getenv("RANK"));
        int world = Integer.parseInt(System.getenv("WORLD_SIZE"));
        boolean neverFail = args.length > 1 && args[1].equals("never-fail");
        if (rank == 1 && !neverFail) {
            long deadline = System.nanoTime() + 60_000_000_000L;
            while (files(dir) < world - 1 && System.nanoTime() < deadline) {
                Thread.sleep(20);
            }
            System.out.println("rank 1 fails now");
            System.exit(3);
        }
        Files.writeString(dir.resolve("pid-" + rank), Long.toString(ProcessHandle.current().pid()));
        System.out.println("rank " + rank + " sleeps");
        Thread.sleep(600_000);
    }

    private static long files(Path dir) throws IOException {
        try (var list = Files.list(dir)) {
            return list.count();
        }
    }
}
