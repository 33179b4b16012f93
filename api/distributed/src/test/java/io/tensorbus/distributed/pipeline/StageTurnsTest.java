package io.tensorbus.distributed.pipeline;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@link StageTurns}: micro-batches take the stage in the driver's order, and a missing one stalls nothing for long.
 */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class StageTurnsTest {

    @Test
    void microBatchesArrivingInReverseRunInTheirOrder() throws Exception {
        StageTurns turns = new StageTurns();
        List<Long> ran = Collections.synchronizedList(new ArrayList<>());
        List<Thread> threads = new ArrayList<>();
        for (long t = 5; t >= 0; t--) {
            long ticket = t;
            threads.add(Thread.startVirtualThread(() -> {
                try {
                    turns.await(ticket);
                    ran.add(ticket);
                    turns.done(ticket);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }));
            Thread.sleep(20);
        }
        for (Thread th : threads) {
            th.join();
        }
        assertEquals(List.of(0L, 1L, 2L, 3L, 4L, 5L), ran);
    }

    @Test
    void aMicroBatchWhosePredecessorNeverComesGoesAheadAfterThePatience() throws Exception {
        StageTurns turns = new StageTurns();
        long start = System.nanoTime();
        turns.await(3); // 0, 1 and 2 never come
        long waited = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
        assertTrue(waited >= StageTurns.PATIENCE_MILLIS - 50 && waited < StageTurns.PATIENCE_MILLIS + 2000,
                "waited " + waited + " ms");
        turns.done(3);
        long again = System.nanoTime();
        turns.await(4);
        assertTrue(System.nanoTime() - again < TimeUnit.MILLISECONDS.toNanos(100), "the next one does not wait");
    }
}
