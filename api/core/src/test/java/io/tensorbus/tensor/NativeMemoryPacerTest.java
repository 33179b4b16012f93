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

    @Test
    void whenYoungCollectionsReturnTheStorageNoFullCollectionIsAskedForEveryStep() {
        long chunk = 32L << 20;
        long before = NativeMemoryPacer.requested();
        long sink = 0;
        for (int i = 0; i < 48; i++) {
            Tensor t = Tensor.empty(DType.FLOAT32, (int) (chunk / 4));
            t.set(i, 0);
            // A training step's heap garbage, enough for the JVM's own young collections to run.
            for (int k = 0; k < 64; k++) {
                byte[] garbage = new byte[1 << 20];
                garbage[k] = (byte) i;
                sink += garbage[k];
            }
        }
        long asked = NativeMemoryPacer.requested() - before;
        // The old rule asked after every 256 MiB: 5 times for these 1.5 GiB.
        assertTrue(asked <= 2, "full collections asked for: " + asked + " (sink " + sink + ")");
        long live = NativeMemoryPacer.liveBytes();
        assertTrue(live < (800L << 20), "off-heap storage still held: " + (live >> 20) + " MiB");
    }
}
