package io.tensorbus.internal.tensor;

import io.tensorbus.DType;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * Walks strided layouts: the one copy routine behind {@code contiguous}, {@code copyi}, dtype conversion,
 * {@code cat} and the writes into slices. Offsets and strides are in elements.
 */
public final class Strided {
    private Strided() {
    }

    /** One operand of a strided walk: memory, dtype, offset and strides (in elements). */
    public record View(MemorySegment segment, DType dtype, long offset, int[] strides) {
    }

    /**
     * Copies {@code src} into {@code dst} element by element over {@code shape}, converting the dtype
     * where they differ. Runs of contiguous elements of the same dtype are copied in bulk.
     */
    public static void copy(View src, View dst, int[] shape) {
        int rank = shape.length;
        if (Shapes.numel(shape) == 0) {
            return;
        }
        if (rank == 0) {
            copyRun(src, src.offset, 0, dst, dst.offset, 0, 1);
            return;
        }
        int inner = shape[rank - 1];
        int sInner = src.strides[rank - 1];
        int dInner = dst.strides[rank - 1];
        int[] idx = new int[rank];
        long so = src.offset;
        long d0 = dst.offset;
        while (true) {
            copyRun(src, so, sInner, dst, d0, dInner, inner);
            int k = rank - 2;
            for (; k >= 0; k--) {
                idx[k]++;
                so += src.strides[k];
                d0 += dst.strides[k];
                if (idx[k] < shape[k]) {
                    break;
                }
                so -= (long) src.strides[k] * shape[k];
                d0 -= (long) dst.strides[k] * shape[k];
                idx[k] = 0;
            }
            if (k < 0) {
                return;
            }
        }
    }

    private static void copyRun(View src, long so, int ss, View dst, long d0, int ds, int n) {
        DType st = src.dtype;
        DType dt = dst.dtype;
        if (st == dt && ss == 1 && ds == 1) {
            long es = st.byteSize();
            MemorySegment.copy(src.segment, so * es, dst.segment, d0 * es, n * es);
            return;
        }
        if (st == dt) {
            copySameType(src.segment, so, ss, dst.segment, d0, ds, n, st.byteSize());
            return;
        }
        boolean integral = !st.isFloatingPoint() && !dt.isFloatingPoint();
        for (int i = 0; i < n; i++) {
            long a = so + (long) i * ss;
            long b = d0 + (long) i * ds;
            if (integral || !st.isFloatingPoint()) {
                Access.setLong(dst.segment, dt, b, Access.getLong(src.segment, st, a));
            } else {
                Access.setDouble(dst.segment, dt, b, Access.getDouble(src.segment, st, a));
            }
        }
    }

    /** Bit copies of a strided run: the dtype does not matter, only the element size. */
    private static void copySameType(MemorySegment s, long so, int ss, MemorySegment d, long d0, int ds, int n,
            int es) {
        switch (es) {
            case 1 -> {
                for (int i = 0; i < n; i++) {
                    d.set(ValueLayout.JAVA_BYTE, d0 + (long) i * ds, s.get(ValueLayout.JAVA_BYTE, so + (long) i * ss));
                }
            }
            case 2 -> {
                for (int i = 0; i < n; i++) {
                    d.setAtIndex(ValueLayout.JAVA_SHORT, d0 + (long) i * ds,
                            s.getAtIndex(ValueLayout.JAVA_SHORT, so + (long) i * ss));
                }
            }
            case 4 -> {
                for (int i = 0; i < n; i++) {
                    d.setAtIndex(ValueLayout.JAVA_INT, d0 + (long) i * ds,
                            s.getAtIndex(ValueLayout.JAVA_INT, so + (long) i * ss));
                }
            }
            default -> {
                for (int i = 0; i < n; i++) {
                    d.setAtIndex(ValueLayout.JAVA_LONG, d0 + (long) i * ds,
                            s.getAtIndex(ValueLayout.JAVA_LONG, so + (long) i * ss));
                }
            }
        }
    }
}
