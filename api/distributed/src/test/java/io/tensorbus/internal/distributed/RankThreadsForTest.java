package io.tensorbus.internal.distributed;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Runs a body as the ranks of {@code tensorbus launch --ranks-as-threads} run: one platform thread per rank, each with
 * an environment of its own ({@code RANK}) that the threads it starts inherit.
 */
public final class RankThreadsForTest {
    private RankThreadsForTest() {
    }

    /** What a rank thread runs. */
    public interface RankBody {
        void run(int rank) throws Exception;
    }

    /**
     * Runs {@code body} on {@code n} rank threads at once and waits for all.
     *
     * @return what each rank that failed threw, by rank (empty when all succeeded)
     */
    public static Map<Integer, Throwable> run(int n, RankBody body) throws InterruptedException {
        Map<Integer, Throwable> failed = new ConcurrentHashMap<>();
        Thread[] ranks = new Thread[n];
        for (int r = 0; r < n; r++) {
            int rank = r;
            ranks[r] = new Thread(() -> {
                try {
                    RankEnvironment.call(Map.of("RANK", String.valueOf(rank)), () -> {
                        body.run(rank);
                        return null;
                    });
                } catch (Throwable e) {
                    failed.put(rank, e);
                }
            }, "rank-" + r);
            ranks[r].start();
        }
        for (Thread t : ranks) {
            t.join();
        }
        return failed;
    }
}
