package io.tensorbus.workloads.examples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.tensorbus.distributed.Distributed;
import io.tensorbus.tensor.Tensor;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReferenceArray;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The tutorial's blocking and non-blocking point-to-point programs, ranks as threads. */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class PointToPointExamplesTest {
    @Test
    void blockingSendDeliversOneToRankOne() {
        AtomicReferenceArray<Tensor> data = new AtomicReferenceArray<>(2);
        AtomicReferenceArray<String> printed = new AtomicReferenceArray<>(2);
        Distributed.spawn(2, pg -> {
            ByteArrayOutputStream buf = new ByteArrayOutputStream();
            data.set(pg.rank(), BlockingPointToPoint.run(pg, new PrintStream(buf, true, StandardCharsets.UTF_8)));
            printed.set(pg.rank(), buf.toString(StandardCharsets.UTF_8));
        });
        for (int r = 0; r < 2; r++) {
            assertEquals(1.0, data.get(r).getDouble(0), 0.0, "rank " + r);
            assertEquals("Rank " + r + " has data 1.0" + System.lineSeparator(), printed.get(r));
        }
    }

    @Test
    void ranksBeyondOneKeepTheirZero() {
        AtomicReferenceArray<Tensor> data = new AtomicReferenceArray<>(3);
        Distributed.spawn(3, pg -> data.set(pg.rank(), BlockingPointToPoint.run(pg, nowhere())));
        assertEquals(1.0, data.get(0).getDouble(0), 0.0);
        assertEquals(1.0, data.get(1).getDouble(0), 0.0);
        assertEquals(0.0, data.get(2).getDouble(0), 0.0);
    }

    @Test
    void nonBlockingSendDeliversOneAfterTheWait() {
        AtomicReferenceArray<Tensor> data = new AtomicReferenceArray<>(2);
        AtomicReferenceArray<String> printed = new AtomicReferenceArray<>(2);
        Distributed.spawn(2, pg -> {
            ByteArrayOutputStream buf = new ByteArrayOutputStream();
            data.set(pg.rank(), NonBlockingPointToPoint.run(pg, new PrintStream(buf, true, StandardCharsets.UTF_8)));
            printed.set(pg.rank(), buf.toString(StandardCharsets.UTF_8));
        });
        String nl = System.lineSeparator();
        assertEquals(1.0, data.get(0).getDouble(0), 0.0);
        assertEquals(1.0, data.get(1).getDouble(0), 0.0);
        assertEquals("Rank 0 started sending" + nl + "Rank 0 has data 1.0" + nl, printed.get(0));
        assertEquals("Rank 1 started receiving" + nl + "Rank 1 has data 1.0" + nl, printed.get(1));
    }

    @Test
    void oneRankIsNotEnough() {
        Distributed.spawn(1, pg -> {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                    () -> BlockingPointToPoint.run(pg, nowhere()));
            assertTrue(e.getMessage().contains("at least 2 ranks"), e.getMessage());
        });
    }

    static PrintStream nowhere() {
        return new PrintStream(PrintStream.nullOutputStream());
    }
}
