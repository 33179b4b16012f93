package io.tensorbus.spi.support;

import io.tensorbus.DType;
import io.tensorbus.c10d.ReduceOp;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

/** Host reductions give the same bytes whichever kind of memory (Java arrays or native) holds the operands. */
class HostReductionsTest {

    private static MemorySegment randomBytes(long bytes, long seed, boolean heap) {
        byte[] b = new byte[(int) bytes];
        new SplittableRandom(seed).nextBytes(b);
        for (int i = 1; i < b.length; i += 2) {
            b[i] &= 0x3f; // the high byte of every element: finite values (NaN payloads need not survive JIT tiers)
        }
        return heap ? MemorySegment.ofArray(b) : Arena.ofAuto().allocate(bytes, 64).copyFrom(MemorySegment.ofArray(b));
    }

    @Test
    void heapAndNativeOperandsReduceToTheSameBytesAcrossStagingBlocks() {
        long n = 100_003; // several 64 KiB staging blocks and a ragged end
        for (DType dtype : new DType[] {DType.FLOAT32, DType.FLOAT64, DType.INT32, DType.INT64, DType.FLOAT16}) {
            for (ReduceOp op : new ReduceOp[] {ReduceOp.SUM, ReduceOp.MAX}) {
                long bytes = n * dtype.byteSize();
                MemorySegment expected = randomBytes(bytes, 1, false);
                HostReductions.reduceInto(op, dtype, expected, randomBytes(bytes, 2, false));
                for (boolean heapAcc : new boolean[] {false, true}) {
                    for (boolean heapSrc : new boolean[] {false, true}) {
                        MemorySegment acc = randomBytes(bytes, 1, heapAcc);
                        HostReductions.reduceInto(op, dtype, acc, randomBytes(bytes, 2, heapSrc));
                        assertEquals(-1, expected.mismatch(acc), dtype + " " + op + " heap acc " + heapAcc
                                + ", heap src " + heapSrc);
                    }
                }
            }
        }
    }

    @Test
    void reducingIntoBothLeavesBothOperandsHoldingWhatReduceIntoGives() {
        long n = 100_003; // vector lanes and a ragged end
        for (DType dtype : new DType[] {DType.FLOAT32, DType.FLOAT64, DType.INT32, DType.FLOAT16}) {
            for (ReduceOp op : new ReduceOp[] {ReduceOp.SUM, ReduceOp.MAX}) {
                long bytes = n * dtype.byteSize();
                MemorySegment expected = randomBytes(bytes, 1, false);
                HostReductions.reduceInto(op, dtype, expected, randomBytes(bytes, 2, false));
                for (boolean heap : new boolean[] {false, true}) {
                    MemorySegment acc = randomBytes(bytes, 1, heap);
                    MemorySegment src = randomBytes(bytes, 2, !heap && dtype == DType.FLOAT32 && op == ReduceOp.MAX);
                    HostReductions.reduceIntoBoth(op, dtype, acc, src);
                    assertEquals(-1, expected.mismatch(acc), dtype + " " + op + " heap " + heap + ": acc");
                    assertEquals(-1, expected.mismatch(src), dtype + " " + op + " heap " + heap + ": src");
                }
            }
        }
    }

    @Test
    void reducingIntoBothRefusesOperandsOfDifferentSizes() {
        MemorySegment acc = Arena.ofAuto().allocate(16, 64);
        MemorySegment src = Arena.ofAuto().allocate(20, 64);
        assertThrows(IllegalArgumentException.class,
                () -> HostReductions.reduceIntoBoth(ReduceOp.SUM, DType.FLOAT32, acc, src));
    }

    @Test
    void operandsOfDifferentSizesAreRefused() {
        assertThrows(IllegalArgumentException.class, () -> HostReductions.reduceInto(ReduceOp.SUM, DType.FLOAT32,
                MemorySegment.ofArray(new float[4]), MemorySegment.ofArray(new float[5])));
    }

    @Test
    void aSumOfKnownValuesIsExact() {
        MemorySegment acc = MemorySegment.ofArray(new float[] {1, 2, 3});
        HostReductions.reduceInto(ReduceOp.SUM, DType.FLOAT32, acc, MemorySegment.ofArray(new float[] {10, 20, 30}));
        assertEquals(33f, acc.getAtIndex(ValueLayout.JAVA_FLOAT, 2));
    }
}
