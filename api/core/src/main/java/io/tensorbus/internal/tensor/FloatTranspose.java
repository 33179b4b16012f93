package io.tensorbus.internal.tensor;

import java.lang.foreign.MemorySegment;
import java.nio.ByteOrder;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.IntVector;
import jdk.incubator.vector.VectorSpecies;

/**
 * Transposes a square block of {@code LANES x LANES} 32-bit values (float bits, as ints) with two-vector
 * permutes: stage {@code b} swaps bit {@code b} of the row index with bit {@code b} of the column index,
 * so {@code log2(LANES)} stages make the transpose. Ints rather than floats because the permute indexes
 * are then used as they are, with no float-to-int conversion per permute.
 *
 * <p>For 16 lanes (AVX-512) {@link #transpose16} keeps the whole block in registers: each of its four
 * stages is the same perfect shuffle (row {@code i} with row {@code i+8} gives rows {@code 2i, 2i+1}),
 * which rotates the 8 bits of (row, column) by one, so four stages swap row and column.
 */
final class FloatTranspose {
    /** Int lanes as wide as the preferred float vector. */
    static final VectorSpecies<Integer> INTS = IntVector.SPECIES_PREFERRED;
    /** Lanes of the preferred float vector: the side of a block. */
    static final int LANES = FloatVector.SPECIES_PREFERRED.length();
    /** Values in one block. */
    static final int BLOCK = LANES * LANES;

    private static final int STAGES = Integer.numberOfTrailingZeros(LANES);
    private static final int[][] LOW = new int[STAGES][LANES];
    private static final int[][] HIGH = new int[STAGES][LANES];

    static {
        for (int b = 0; b < STAGES; b++) {
            int s = 1 << b;
            for (int c = 0; c < LANES; c++) {
                int source = (c & s) != 0 ? LANES : 0;
                LOW[b][c] = source + (c & ~s);
                HIGH[b][c] = source + (c | s);
            }
        }
    }

    /** Perfect-shuffle indexes into (row i, row i+8) for rows 2i and 2i+1; used only with 16 lanes. */
    private static final int[] EVEN = new int[16];
    private static final int[] ODD = new int[16];

    static {
        for (int c = 0; c < 16; c++) {
            EVEN[c] = (c & 1) * 16 + (c >> 1);
            ODD[c] = (c & 1) * 16 + 8 + (c >> 1);
        }
    }

    private FloatTranspose() {
    }

    /**
     * With 16 lanes only: reads 16 rows of 16 floats from {@code src} (the first at byte {@code at}, the
     * next {@code rowBytes} on) and writes the block's 16 columns as rows of {@code dst}: column {@code p}
     * at {@code dst[to + p * stride]}.
     */
    static void transpose16(MemorySegment src, long at, long rowBytes, float[] dst, int to, int stride) {
        ByteOrder o = ByteOrder.nativeOrder();
        IntVector r0 = IntVector.fromMemorySegment(INTS, src, at, o);
        IntVector r1 = IntVector.fromMemorySegment(INTS, src, at + rowBytes, o);
        IntVector r2 = IntVector.fromMemorySegment(INTS, src, at + 2 * rowBytes, o);
        IntVector r3 = IntVector.fromMemorySegment(INTS, src, at + 3 * rowBytes, o);
        IntVector r4 = IntVector.fromMemorySegment(INTS, src, at + 4 * rowBytes, o);
        IntVector r5 = IntVector.fromMemorySegment(INTS, src, at + 5 * rowBytes, o);
        IntVector r6 = IntVector.fromMemorySegment(INTS, src, at + 6 * rowBytes, o);
        IntVector r7 = IntVector.fromMemorySegment(INTS, src, at + 7 * rowBytes, o);
        IntVector r8 = IntVector.fromMemorySegment(INTS, src, at + 8 * rowBytes, o);
        IntVector r9 = IntVector.fromMemorySegment(INTS, src, at + 9 * rowBytes, o);
        IntVector r10 = IntVector.fromMemorySegment(INTS, src, at + 10 * rowBytes, o);
        IntVector r11 = IntVector.fromMemorySegment(INTS, src, at + 11 * rowBytes, o);
        IntVector r12 = IntVector.fromMemorySegment(INTS, src, at + 12 * rowBytes, o);
        IntVector r13 = IntVector.fromMemorySegment(INTS, src, at + 13 * rowBytes, o);
        IntVector r14 = IntVector.fromMemorySegment(INTS, src, at + 14 * rowBytes, o);
        IntVector r15 = IntVector.fromMemorySegment(INTS, src, at + 15 * rowBytes, o);
        IntVector even = IntVector.fromArray(INTS, EVEN, 0);
        IntVector odd = IntVector.fromArray(INTS, ODD, 0);
        for (int stage = 0; stage < 4; stage++) {
            IntVector n0 = even.selectFrom(r0, r8);
            IntVector n1 = odd.selectFrom(r0, r8);
            IntVector n2 = even.selectFrom(r1, r9);
            IntVector n3 = odd.selectFrom(r1, r9);
            IntVector n4 = even.selectFrom(r2, r10);
            IntVector n5 = odd.selectFrom(r2, r10);
            IntVector n6 = even.selectFrom(r3, r11);
            IntVector n7 = odd.selectFrom(r3, r11);
            IntVector n8 = even.selectFrom(r4, r12);
            IntVector n9 = odd.selectFrom(r4, r12);
            IntVector n10 = even.selectFrom(r5, r13);
            IntVector n11 = odd.selectFrom(r5, r13);
            IntVector n12 = even.selectFrom(r6, r14);
            IntVector n13 = odd.selectFrom(r6, r14);
            IntVector n14 = even.selectFrom(r7, r15);
            IntVector n15 = odd.selectFrom(r7, r15);
            r0 = n0;
            r1 = n1;
            r2 = n2;
            r3 = n3;
            r4 = n4;
            r5 = n5;
            r6 = n6;
            r7 = n7;
            r8 = n8;
            r9 = n9;
            r10 = n10;
            r11 = n11;
            r12 = n12;
            r13 = n13;
            r14 = n14;
            r15 = n15;
        }
        r0.reinterpretAsFloats().intoArray(dst, to);
        r1.reinterpretAsFloats().intoArray(dst, to + stride);
        r2.reinterpretAsFloats().intoArray(dst, to + 2 * stride);
        r3.reinterpretAsFloats().intoArray(dst, to + 3 * stride);
        r4.reinterpretAsFloats().intoArray(dst, to + 4 * stride);
        r5.reinterpretAsFloats().intoArray(dst, to + 5 * stride);
        r6.reinterpretAsFloats().intoArray(dst, to + 6 * stride);
        r7.reinterpretAsFloats().intoArray(dst, to + 7 * stride);
        r8.reinterpretAsFloats().intoArray(dst, to + 8 * stride);
        r9.reinterpretAsFloats().intoArray(dst, to + 9 * stride);
        r10.reinterpretAsFloats().intoArray(dst, to + 10 * stride);
        r11.reinterpretAsFloats().intoArray(dst, to + 11 * stride);
        r12.reinterpretAsFloats().intoArray(dst, to + 12 * stride);
        r13.reinterpretAsFloats().intoArray(dst, to + 13 * stride);
        r14.reinterpretAsFloats().intoArray(dst, to + 14 * stride);
        r15.reinterpretAsFloats().intoArray(dst, to + 15 * stride);
    }

    /**
     * Transposes the row-major block in {@code buffer[0..BLOCK)}, using {@code buffer[BLOCK..2*BLOCK)} as
     * scratch; the result is in {@code buffer} from {@link #resultOffset()} on.
     */
    static void transpose(int[] buffer) {
        int from = 0;
        int to = BLOCK;
        for (int b = 0; b < STAGES; b++) {
            int s = 1 << b;
            IntVector lo = IntVector.fromArray(INTS, LOW[b], 0);
            IntVector hi = IntVector.fromArray(INTS, HIGH[b], 0);
            for (int r = 0; r < LANES; r++) {
                if ((r & s) == 0) {
                    IntVector v1 = IntVector.fromArray(INTS, buffer, from + r * LANES);
                    IntVector v2 = IntVector.fromArray(INTS, buffer, from + (r | s) * LANES);
                    lo.selectFrom(v1, v2).intoArray(buffer, to + r * LANES);
                    hi.selectFrom(v1, v2).intoArray(buffer, to + (r | s) * LANES);
                }
            }
            int t = from;
            from = to;
            to = t;
        }
    }

    /** Where in the buffer {@link #transpose} leaves its result. */
    static int resultOffset() {
        return STAGES % 2 == 0 ? 0 : BLOCK;
    }
}
