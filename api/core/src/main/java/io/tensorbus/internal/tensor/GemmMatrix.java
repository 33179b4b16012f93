package io.tensorbus.internal.tensor;

import java.lang.foreign.MemorySegment;

/**
 * One GEMM operand as it lies in memory: row-major from element {@code off} of {@code seg}, rows
 * {@code ld} elements apart, used as stored or ({@code trans}) as its transpose.
 */
record GemmMatrix(MemorySegment seg, long off, int ld, boolean trans) {
    /** Element index of the operand's (as used, so after any transpose) row {@code i}, column {@code j}. */
    long index(int i, int j) {
        return trans ? off + (long) j * ld + i : off + (long) i * ld + j;
    }
}
