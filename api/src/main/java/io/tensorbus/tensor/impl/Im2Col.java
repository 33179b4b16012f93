package io.tensorbus.tensor.impl;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorSpecies;

/**
 * Unfolds image planes into the column matrix that turns convolution into GEMM, and folds columns back
 * (summing overlaps) for the input gradient. Rows are (channel, ki, kj), columns are output positions.
 * Works on float32 and float64 contiguous planes; offsets are in elements.
 */
public final class Im2Col {
    private static final VectorSpecies<Float> F = FloatVector.SPECIES_PREFERRED;
    private static final ByteOrder ORDER = ByteOrder.nativeOrder();

    private Im2Col() {
    }

    /** Writes the {@code [channels * kH * kW, outH * outW]} columns of {@code channels} planes at {@code xOff}. */
    public static void im2col(MemorySegment x, long xOff, int channels, ConvGeometry g, MemorySegment col,
            long colOff, boolean isFloat) {
        int p = g.outPlane();
        int kk = g.kH() * g.kW();
        io.tensorbus.tensor.Threads.parallelFor(0, channels * kk, Math.max(1, 4096 / Math.max(p, 1)), (r0, r1) -> {
            for (int row = r0; row < r1; row++) {
                int c = row / kk;
                int ki = (row % kk) / g.kW();
                int kj = row % g.kW();
                long plane = xOff + (long) c * g.inPlane();
                long out = colOff + (long) row * p;
                if (samePlane(g)) {
                    shiftedCopy(x, plane, g, ki, kj, col, out, isFloat);
                    continue;
                }
                for (int oh = 0; oh < g.outH(); oh++) {
                    int ih = oh * g.sH() - g.pH() + ki * g.dH();
                    long o = out + (long) oh * g.outW();
                    if (ih < 0 || ih >= g.inH()) {
                        fillZero(col, o, g.outW(), isFloat);
                    } else {
                        copyRow(x, plane + (long) ih * g.inW(), g, kj, col, o, isFloat);
                    }
                }
            }
        });
    }

    /**
     * A same-plane geometry ({@link ConvGeometry#isSamePlane}): a column row is then the input plane shifted
     * by {@code dh*W + dw}, so it is one bulk copy plus the zeroing of the rows and edge columns that fall
     * in the padding.
     */
    private static boolean samePlane(ConvGeometry g) {
        return g.isSamePlane();
    }

    /** The band of output rows {@code [lo, hi)} that reads inside the input for a kernel row offset {@code dh}. */
    private static int bandLo(int dh, int h) {
        return Math.min(h, Math.max(0, -dh));
    }

    private static int bandHi(int dh, int h) {
        return Math.max(0, Math.min(h, h - dh));
    }

    private static void shiftedCopy(MemorySegment x, long plane, ConvGeometry g, int ki, int kj, MemorySegment col,
            long out, boolean isFloat) {
        int w = g.inW();
        int h = g.inH();
        int dh = ki * g.dH() - g.pH();
        int dw = kj * g.dW() - g.pW();
        int lo = bandLo(dh, h);
        int hi = Math.max(lo, bandHi(dh, h));
        fillZero(col, out, lo * w, isFloat);
        fillZero(col, out + (long) hi * w, (h - hi) * w, isFloat);
        // The band's source starts at ((lo + dh) * W + dw); elements before 0 or past the plane are edge
        // columns, zeroed below, so the copy is clipped to the plane.
        long src = (long) (lo + dh) * w + dw;
        long dst = (long) lo * w;
        long len = (long) (hi - lo) * w;
        long skip = Math.max(0, -src);
        long end = Math.min(len, (long) h * w - src);
        int es = isFloat ? 4 : 8;
        if (end > skip) {
            MemorySegment.copy(x, (plane + src + skip) * es, col, (out + dst + skip) * es, (end - skip) * es);
        }
        zeroEdgeColumns(col, out, lo, hi, w, dw, isFloat);
    }

    /** Zeroes, in rows {@code [lo, hi)} of a column row, the columns that read left or right of the input. */
    private static void zeroEdgeColumns(MemorySegment col, long out, int lo, int hi, int w, int dw, boolean isFloat) {
        int n = Math.min(Math.abs(dw), w);
        if (n == 0) {
            return;
        }
        for (int oh = lo; oh < hi; oh++) {
            long rowStart = out + (long) oh * w;
            fillZero(col, dw < 0 ? rowStart : rowStart + w - n, n, isFloat);
        }
    }

    private static void fillZero(MemorySegment col, long o, int n, boolean isFloat) {
        int es = isFloat ? 4 : 8;
        col.asSlice(o * es, (long) n * es).fill((byte) 0);
    }

    private static void copyRow(MemorySegment x, long rowOff, ConvGeometry g, int kj, MemorySegment col, long o,
            boolean isFloat) {
        int ow = g.outW();
        int base = kj * g.dW() - g.pW();
        int sw = g.sW();
        int lo = Math.min(ow, Math.max(0, (-base + sw - 1) / sw));
        int hi = Math.max(lo, Math.min(ow, (g.inW() - base + sw - 1) / sw));
        if (lo > 0) {
            fillZero(col, o, lo, isFloat);
        }
        if (hi < ow) {
            fillZero(col, o + hi, ow - hi, isFloat);
        }
        if (sw == 1) {
            // Unit stride: the valid part of the row is one contiguous run of the input.
            int es = isFloat ? 4 : 8;
            MemorySegment.copy(x, (rowOff + lo + base) * es, col, (o + lo) * es, (long) (hi - lo) * es);
            return;
        }
        for (int j = lo; j < hi; j++) {
            long xi = rowOff + (long) j * sw + base;
            if (isFloat) {
                col.setAtIndex(ValueLayout.JAVA_INT, o + j, x.getAtIndex(ValueLayout.JAVA_INT, xi));
            } else {
                col.setAtIndex(ValueLayout.JAVA_LONG, o + j, x.getAtIndex(ValueLayout.JAVA_LONG, xi));
            }
        }
    }

    /** Adds the columns back into {@code channels} planes at {@code xOff} (which the caller zeroed). */
    public static void col2im(MemorySegment col, long colOff, int channels, ConvGeometry g, MemorySegment x,
            long xOff, boolean isFloat) {
        int p = g.outPlane();
        int kk = g.kH() * g.kW();
        // One channel per task: rows of the same channel add into the same plane.
        io.tensorbus.tensor.Threads.parallelFor(0, channels, 1, (c0, c1) -> {
            for (int c = c0; c < c1; c++) {
                long plane = xOff + (long) c * g.inPlane();
                for (int k = 0; k < kk; k++) {
                    int ki = k / g.kW();
                    int kj = k % g.kW();
                    long in = colOff + (long) (c * kk + k) * p;
                    if (isFloat && samePlane(g)) {
                        shiftedAdd(col, in, g, ki, kj, x, plane);
                        continue;
                    }
                    for (int oh = 0; oh < g.outH(); oh++) {
                        int ih = oh * g.sH() - g.pH() + ki * g.dH();
                        if (ih >= 0 && ih < g.inH()) {
                            addRow(col, in + (long) oh * g.outW(), g, kj, x, plane + (long) ih * g.inW(), isFloat);
                        }
                    }
                }
            }
        });
    }

    /**
     * The inverse of {@link #shiftedCopy}: zeroes the padding entries of the column row (it is scratch),
     * then adds the band to the input plane in one shifted vector pass.
     */
    private static void shiftedAdd(MemorySegment col, long in, ConvGeometry g, int ki, int kj, MemorySegment x,
            long plane) {
        int w = g.inW();
        int h = g.inH();
        int dh = ki * g.dH() - g.pH();
        int dw = kj * g.dW() - g.pW();
        int lo = bandLo(dh, h);
        int hi = Math.max(lo, bandHi(dh, h));
        zeroEdgeColumns(col, in, lo, hi, w, dw, true);
        long src = (long) (lo + dh) * w + dw;
        long len = (long) (hi - lo) * w;
        long skip = Math.max(0, -src);
        long end = Math.min(len, (long) h * w - src);
        if (end > skip) {
            addRunF32(col, in + (long) lo * w + skip, x, plane + src + skip, (int) (end - skip));
        }
    }

    private static void addRow(MemorySegment col, long o, ConvGeometry g, int kj, MemorySegment x, long rowOff,
            boolean isFloat) {
        int base = kj * g.dW() - g.pW();
        int sw = g.sW();
        int lo = Math.max(0, (-base + sw - 1) / sw);
        int hi = Math.min(g.outW(), (g.inW() - base + sw - 1) / sw);
        if (isFloat && sw == 1) {
            addRunF32(col, o + lo, x, rowOff + lo + base, hi - lo);
            return;
        }
        for (int j = lo; j < hi; j++) {
            long xi = rowOff + (long) j * sw + base;
            if (isFloat) {
                x.setAtIndex(ValueLayout.JAVA_FLOAT, xi, x.getAtIndex(ValueLayout.JAVA_FLOAT, xi)
                        + col.getAtIndex(ValueLayout.JAVA_FLOAT, o + j));
            } else {
                x.setAtIndex(ValueLayout.JAVA_DOUBLE, xi, x.getAtIndex(ValueLayout.JAVA_DOUBLE, xi)
                        + col.getAtIndex(ValueLayout.JAVA_DOUBLE, o + j));
            }
        }
    }

    /** {@code x[xi .. xi+n) += col[ci .. ci+n)} with the Vector API. */
    private static void addRunF32(MemorySegment col, long ci, MemorySegment x, long xi, int n) {
        int i = 0;
        for (int step = F.length(); i <= n - step; i += step) {
            FloatVector a = FloatVector.fromMemorySegment(F, x, (xi + i) * 4, ORDER);
            FloatVector b = FloatVector.fromMemorySegment(F, col, (ci + i) * 4, ORDER);
            a.add(b).intoMemorySegment(x, (xi + i) * 4, ORDER);
        }
        for (; i < n; i++) {
            x.setAtIndex(ValueLayout.JAVA_FLOAT, xi + i, x.getAtIndex(ValueLayout.JAVA_FLOAT, xi + i)
                    + col.getAtIndex(ValueLayout.JAVA_FLOAT, ci + i));
        }
    }
}
