package io.tensorbus.backend.tcp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.fail;

import io.tensorbus.DType;
import io.tensorbus.c10d.ReduceOp;
import io.tensorbus.spi.DeviceBuffer;
import io.tensorbus.spi.contract.Buffers;
import io.tensorbus.spi.contract.Reference;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

/** {@link Sink}: payloads arrive in pieces of any size, elements split across them. */
class SinkTest {
    private static final int[][] PIECES = {{1}, {3, 2, 5, 7, 1, 11, 4}, {13}, {1 << 20}};

    /** Feeds {@code bytes} to {@code sink} in pieces of the sizes in {@code pattern}, cycling. */
    private static void feed(Sink sink, MemorySegment bytes, int[] pattern) {
        long at = 0;
        for (int k = 0; at < bytes.byteSize(); k++) {
            long take = Math.min(pattern[k % pattern.length], bytes.byteSize() - at);
            // A copy, so that the sink cannot rely on the piece being part of one contiguous array.
            MemorySegment piece = MemorySegment.ofArray(new byte[(int) take]);
            piece.copyFrom(bytes.asSlice(at, take));
            sink.accept(piece);
            at += take;
        }
    }

    @Test
    void reducingSinkCombinesElementsSplitAcrossPieces() {
        for (DType dtype : DType.values()) {
            for (ReduceOp op : Reference.opsFor(dtype)) {
                for (int[] pattern : PIECES) {
                    for (long n : new long[] {1, 37, 1000}) {
                        DeviceBuffer acc = Reference.input(dtype, op, 0, 2, n);
                        DeviceBuffer src = Reference.input(dtype, op, 1, 2, n);
                        DeviceBuffer expected = Reference.reduce(op, List.of(acc, src));
                        if (op == ReduceOp.AVG) {
                            // The sink only sums; the collective divides at the end.
                            expected = Reference.reduce(ReduceOp.SUM, List.of(acc, src));
                        }
                        Sink sink = Sink.reduceInto(acc.segment(), op, dtype);
                        feed(sink, src.segment(), pattern);
                        String what = op + " of " + dtype + "[" + n + "] in pieces of " + Arrays.toString(pattern);
                        assertEquals(acc.byteSize(), sink.written, what + ": bytes reduced");
                        long at = Buffers.mismatch(expected, acc);
                        if (at >= 0) {
                            fail(what + ": element " + at / dtype.byteSize() + " differs");
                        }
                    }
                }
            }
        }
    }

    @Test
    void copySinkAssemblesPiecesInOrder() {
        MemorySegment src = MemorySegment.ofArray(new byte[10_007]);
        for (int i = 0; i < src.byteSize(); i++) {
            src.set(ValueLayout.JAVA_BYTE, i, (byte) (i * 31));
        }
        for (int[] pattern : PIECES) {
            MemorySegment dest = MemorySegment.ofArray(new byte[10_007]);
            Sink sink = Sink.copyInto(dest);
            feed(sink, src, pattern);
            assertEquals(-1, src.mismatch(dest), "copy in pieces of " + Arrays.toString(pattern));
        }
    }

    @Test
    void aCancelledSinkDropsTheRestOfTheMessage() {
        MemorySegment dest = MemorySegment.ofArray(new byte[8]);
        Sink sink = Sink.copyInto(dest);
        sink.accept(MemorySegment.ofArray(new byte[] {1, 2, 3, 4}));
        sink.cancel();
        sink.accept(MemorySegment.ofArray(new byte[] {5, 6, 7, 8}));
        assertEquals(-1, dest.mismatch(MemorySegment.ofArray(new byte[] {1, 2, 3, 4, 0, 0, 0, 0})));
    }
}
