package io.tensorbus.workloads.examples;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.tensorbus.DType;
import io.tensorbus.c10d.ReduceOp;
import io.tensorbus.distributed.Distributed;
import io.tensorbus.tensor.Tensor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReferenceArray;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** The tutorial's hand-written rings give what {@code allReduce} gives. */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class RingAllReduceExampleTest {
    @ParameterizedTest(name = "world {0}")
    @ValueSource(ints = {2, 3, 4})
    void bothRingsEqualAllReduce(int world) {
        AtomicReferenceArray<RingAllReduceExample.Result> results = new AtomicReferenceArray<>(world);
        Distributed.spawn(world, pg -> results.set(pg.rank(),
                RingAllReduceExample.run(pg, PointToPointExamplesTest.nowhere())));
        // The exact sum, independent of the order any algorithm adds in.
        double[] expected = new double[RingAllReduceExample.NUMEL];
        for (int r = 0; r < world; r++) {
            double[] in = results.get(r).input().toDoubleArray();
            for (int i = 0; i < expected.length; i++) {
                expected[i] += in[i];
            }
        }
        for (int r = 0; r < world; r++) {
            RingAllReduceExample.Result res = results.get(r);
            assertTrue(res.maxError() < 1e-5, "rank " + r + ": ring differs from allReduce by " + res.maxError());
            assertArrayEquals(expected, res.ring().toDoubleArray(), 1e-5, "rank " + r + " ring");
            assertArrayEquals(expected, res.chunkedRing().toDoubleArray(), 1e-5, "rank " + r + " chunked ring");
        }
    }

    @Test
    void chunkedRingHandlesUnevenChunksAndTinyTensors() {
        Distributed.spawn(3, pg -> {
            for (int numel : new int[] {1, 2, 7, 3001}) {
                Tensor send = Tensor.full(pg.rank() + 1, DType.FLOAT32, numel);
                Tensor ring = Tensor.zeros(numel);
                RingAllReduceExample.chunkedAllreduce(pg, send, ring);
                Tensor plain = Tensor.zeros(numel);
                RingAllReduceExample.allreduce(pg, send, plain);
                Tensor reference = send.clone();
                pg.allReduce(reference, ReduceOp.SUM).await();
                assertArrayEquals(reference.toFloatArray(), ring.toFloatArray(), "chunked, numel " + numel);
                assertArrayEquals(reference.toFloatArray(), plain.toFloatArray(), "plain, numel " + numel);
                assertEquals(6.0, ring.getDouble(numel - 1), 0.0);
            }
        });
    }

    @Test
    void chunkSizesSplitEvenlyFirstOnesLarger() {
        assertArrayEquals(new int[] {3, 2, 2}, RingAllReduceExample.chunkSizes(7, 3));
        assertArrayEquals(new int[] {2, 2}, RingAllReduceExample.chunkSizes(4, 2));
    }
}
