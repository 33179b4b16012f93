package io.tensorbus.tensor;

import static org.junit.jupiter.api.Assertions.assertTrue;

import io.tensorbus.DType;
import org.junit.jupiter.api.Test;

class NativeMemoryPacerTest {
    @Test
    void deadStorageIsReclaimedWhileATightLoopKeepsAllocating() {
        long chunk = 32L << 20;
        Tensor keep = Tensor.zeros(DType.FLOAT32, 1024);
        for (int i = 0; i < 48; i++) {
            Tensor t = Tensor.empty(DType.FLOAT32, (int) (chunk / 4));
            t.set(i, 0);
        }
        // 1.5 GiB were allocated and dropped; without pacing nearly all of it would still be held here.
        long live = NativeMemoryPacer.liveBytes();
        assertTrue(live < (800L << 20), "off-heap storage still held: " + (live >> 20) + " MiB");
        assertTrue(keep.numel() == 1024);
    }
}
