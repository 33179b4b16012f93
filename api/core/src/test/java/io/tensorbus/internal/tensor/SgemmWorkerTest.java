package io.tensorbus.internal.tensor;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

class SgemmWorkerTest {
    @Test
    void packedBBlockFillsHalfOfL2InWholeTiles() {
        int nr = SgemmKernel.NR;
        assertEquals(512 / nr * nr, SgemmWorker.columnsFor(1 << 20));
        assertEquals(1024 / nr * nr, SgemmWorker.columnsFor(2 << 20));
        assertEquals(512 / nr * nr, SgemmWorker.columnsFor(0), "unknown L2 is taken as 1 MiB");
        assertEquals(256 / nr * nr, SgemmWorker.columnsFor(64 << 10), "never below 256 columns");
        assertEquals(2048 / nr * nr, SgemmWorker.columnsFor(64 << 20), "nor above 2048");
    }
}
