package io.tensorbus.io.impl;

import io.tensorbus.tensor.Tensor;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/** Element reordering between memory layouts, done on raw bytes so that it works for every dtype. */
public final class Layouts {
    private Layouts() {
    }

    /**
     * Copies a Fortran-order (column-major) array into a new C-order (row-major) tensor.
     *
     * @param fortran a contiguous tensor whose bytes are the column-major elements of {@code shape}
     *     (its own shape is irrelevant; only its bytes and dtype are used)
     * @param shape the logical shape of the array
     * @return a contiguous tensor of {@code shape} with the same elements in row-major order
     */
    public static Tensor fortranToC(Tensor fortran, int[] shape) {
        Tensor c = Tensor.empty(fortran.dtype(), shape);
        long n = Dims.numel(shape);
        if (n == 0) {
            return c;
        }
        long[] fStride = new long[shape.length];
        long s = 1;
        for (int d = 0; d < shape.length; d++) {
            fStride[d] = s;
            s *= shape[d];
        }
        copy(fortran.dataSegment(), c.dataSegment(), shape, fStride, n, fortran.dtype().byteSize());
        return c;
    }

    /** Walks the C-order destination with an odometer, tracking the element index in the source. */
    private static void copy(MemorySegment src, MemorySegment dst, int[] shape, long[] fStride, long n, int es) {
        int[] idx = new int[shape.length];
        long from = 0;
        for (long i = 0; i < n; i++) {
            copyElement(src, from, dst, i, es);
            for (int d = shape.length - 1; d >= 0; d--) {
                from += fStride[d];
                if (++idx[d] < shape[d]) {
                    break;
                }
                from -= fStride[d] * shape[d];
                idx[d] = 0;
            }
        }
    }

    private static void copyElement(MemorySegment src, long from, MemorySegment dst, long to, int es) {
        switch (es) {
            case 1 -> dst.set(ValueLayout.JAVA_BYTE, to, src.get(ValueLayout.JAVA_BYTE, from));
            case 2 -> dst.setAtIndex(ValueLayout.JAVA_SHORT, to, src.getAtIndex(ValueLayout.JAVA_SHORT, from));
            case 4 -> dst.setAtIndex(ValueLayout.JAVA_INT, to, src.getAtIndex(ValueLayout.JAVA_INT, from));
            default -> dst.setAtIndex(ValueLayout.JAVA_LONG, to, src.getAtIndex(ValueLayout.JAVA_LONG, from));
        }
    }
}
