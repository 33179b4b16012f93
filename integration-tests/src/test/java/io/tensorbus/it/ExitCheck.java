package io.tensorbus.it;

import io.tensorbus.DType;
import io.tensorbus.distributed.Distributed;
import io.tensorbus.distributed.InitOptions;
import io.tensorbus.distributed.ProcessGroup;
import io.tensorbus.tensor.Tensor;
import java.io.IOException;
import java.time.Duration;

/**
 * One rank of {@link ProcessExitTest}, written as a user would: {@code env://}, blocking awaits, no
 * {@code System.exit} and no {@code close()}. The group timeout is {@code TENSORBUS_CHECK_TIMEOUT_S} seconds
 * (60 by default). Modes (the first argument, then the victim rank where one is needed):
 * <ul>
 *   <li>{@code forget}: one allReduce, print {@code DONE rank R sum=S}, return from main;</li>
 *   <li>{@code throw VICTIM}: rank VICTIM throws from main after the first allReduce; the others run
 *       allReduces (which can no longer finish) until one fails, and let that exception escape main;</li>
 *   <li>{@code kill VICTIM}: as {@code throw}, but rank VICTIM kills its own JVM with {@code kill -9};</li>
 *   <li>{@code slow VICTIM}: as {@code throw}, but rank VICTIM's JVM takes three seconds more to end (a shutdown
 *       hook of its own), so the others, which fail because of it, end first;</li>
 *   <li>{@code loop}: allReduces every 100 ms for up to the group timeout, then returns.</li>
 * </ul>
 * Every rank prints {@code READY rank R pid P} once its group works.
 */
public final class ExitCheck {
    private ExitCheck() {
    }

    public static void main(String[] args) throws Exception {
        Duration timeout = Duration.ofSeconds(Vals.envInt("TENSORBUS_CHECK_TIMEOUT_S", 60));
        String mode = args[0];
        int victim = args.length > 1 ? Integer.parseInt(args[1]) : -1;
        ProcessGroup pg = Distributed.initProcessGroup(InitOptions.builder().timeout(timeout).build()).await();
        Tensor t = Tensor.full(1, DType.FLOAT32, 4);
        pg.allReduce(t).await();
        System.out.println("READY rank " + pg.rank() + " pid " + ProcessHandle.current().pid());
        System.out.flush();
        switch (mode) {
            case "forget" -> System.out.println("DONE rank " + pg.rank() + " sum=" + t.getDouble(0));
            case "throw", "kill", "slow" -> {
                if (pg.rank() == victim) {
                    if (mode.equals("kill")) {
                        killMyself();
                    }
                    if (mode.equals("slow")) {
                        Runtime.getRuntime().addShutdownHook(new Thread(ExitCheck::sleepThreeSeconds));
                    }
                    throw new IllegalStateException("rank " + victim + " gives up");
                }
                runUntilFailure(pg, timeout);
            }
            case "loop" -> runUntilFailure(pg, timeout);
            default -> throw new IllegalArgumentException("unknown mode " + mode);
        }
    }

    /** allReduces until one fails (its exception escapes) or the timeout passes. */
    private static void runUntilFailure(ProcessGroup pg, Duration timeout) throws InterruptedException {
        long end = System.nanoTime() + timeout.toNanos();
        while (System.nanoTime() < end) {
            pg.allReduce(Tensor.ones(1 << 10)).await();
            Thread.sleep(100);
        }
        System.out.println("NO FAILURE rank " + pg.rank());
    }

    private static void sleepThreeSeconds() {
        try {
            Thread.sleep(3000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static void killMyself() throws IOException, InterruptedException {
        new ProcessBuilder("kill", "-9", Long.toString(ProcessHandle.current().pid())).inheritIO().start().waitFor();
        Thread.sleep(60_000);
    }
}
