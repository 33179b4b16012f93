package io.tensorbus.internal.tensor;

import io.tensorbus.tensor.Threads;
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
    private static final VectorSpecies<Float> F8 = FloatVector.SPECIES_256;
    private static final ByteOrder ORDER = ByteOrder.nativeOrder();

    private Im2Col() {
    }

    /** Writes the {@code [channels * kH * kW, outH * outW]} columns of {@code channels} planes at {@code xOff}. */
    public static void im2col(MemorySegment x, long xOff, int channels, ConvGeometry g, MemorySegment col,
            long colOff, boolean isFloat) {
        im2col(x, xOff, channels, g, col, colOff, g.outPlane(), isFloat);
    }

    /**
     * As {@link #im2col(MemorySegment, long, int, ConvGeometry, MemorySegment, long, boolean)} with column rows
     * {@code ld} elements apart, so that several images can fill side-by-side blocks of one wide matrix.
     */
    public static void im2col(MemorySegment x, long xOff, int channels, ConvGeometry g, MemorySegment col,
            long colOff, int ld, boolean isFloat) {
        int p = g.outPlane();
        int kk = g.kH() * g.kW();
        if (isFloat && isValidUnitStride(g)) {
            Threads.parallelFor(0, channels * kk, Threads.grain(p),
                    (r0, r1) -> validIm2colF32(x, xOff, g, col, colOff, ld, r0, r1));
            return;
        }
        Threads.parallelFor(0, channels * kk, Threads.grain(p), (r0, r1) -> {
            for (int row = r0; row < r1; row++) {
                int c = row / kk;
                int ki = (row % kk) / g.kW();
                int kj = row % g.kW();
                long plane = xOff + (long) c * g.inPlane();
                long out = colOff + (long) row * ld;
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
     * im2col of {@code images} images at once: image {@code n}'s {@code channels} planes start at element
     * {@code xOff + n * imageStride} and its columns fill elements {@code [n * P, (n + 1) * P)} of each column row
     * (rows {@code ld} elements apart from {@code colOff}). A valid unit-stride float32 convolution builds each whole
     * row in a heap array and writes it in one copy: per image, its short rows (64 floats for an 8x8 output) cost
     * more in per-copy overhead than in the data they move.
     */
    public static void im2colBatch(MemorySegment x, long xOff, long imageStride, int images, int channels,
            ConvGeometry g, MemorySegment col, long colOff, int ld, boolean isFloat) {
        int p = g.outPlane();
        if (!batchesWell(g, isFloat)) {
            for (int n = 0; n < images; n++) {
                im2col(x, xOff + n * imageStride, channels, g, col, colOff + (long) n * p, ld, isFloat);
            }
            return;
        }
        Threads.parallelFor(0, channels * g.kH() * g.kW(),
                Threads.grain((long) images * p),
                (r0, r1) -> validBatchIm2colF32(x, xOff, imageStride, images, g, col, colOff, ld, r0, r1));
    }

    /**
     * col2im of {@code images} images at once, the inverse layout of {@link #im2colBatch}: adds the columns into
     * the planes. A valid unit-stride float32 convolution reads each column row in one copy and sums channel by
     * channel in heap arrays.
     */
    public static void col2imBatch(MemorySegment col, long colOff, int ld, int images, int channels, ConvGeometry g,
            MemorySegment x, long xOff, long imageStride, boolean isFloat) {
        int p = g.outPlane();
        if (!batchesWell(g, isFloat)) {
            for (int n = 0; n < images; n++) {
                col2im(col, colOff + (long) n * p, ld, channels, g, x, xOff + n * imageStride, isFloat);
            }
            return;
        }
        Threads.parallelFor(0, channels,
                Threads.grain((long) images * p * g.kH() * g.kW()),
                (c0, c1) -> validBatchCol2imF32(col, colOff, ld, images, g, x, xOff, imageStride, c0, c1));
    }

    /**
     * Output planes up to this many elements are unfolded batch-wide: the tutorial network's 8x8 conv2 went from
     * 0.96 to 0.60 ms (im2col) and 1.46 to 0.52 ms (col2im) for 128 images, while its 24x24 conv1 lost a little.
     */
    private static final int MAX_BATCHED_PLANE = 256;

    private static boolean batchesWell(ConvGeometry g, boolean isFloat) {
        return isFloat && isValidUnitStride(g) && g.outPlane() <= MAX_BATCHED_PLANE;
    }

    private static void validBatchIm2colF32(MemorySegment x, long xOff, long imageStride, int images,
            ConvGeometry g, MemorySegment col, long colOff, int ld, int r0, int r1) {
        int kk = g.kH() * g.kW();
        int inPlane = g.inPlane();
        int p = g.outPlane();
        float[] in = new float[images * inPlane];
        float[] row = new float[images * p];
        int loaded = -1;
        for (int r = r0; r < r1; r++) {
            int c = r / kk;
            if (c != loaded) {
                planes(x, xOff + (long) c * inPlane, imageStride, images, in, inPlane, true);
                loaded = c;
            }
            int k = r % kk;
            int shift = shift(g, k);
            for (int n = 0; n < images; n++) {
                gatherRuns(in, n * inPlane + shift, g, row, n * p);
            }
            MemorySegment.copy(row, 0, col, ValueLayout.JAVA_FLOAT, (colOff + (long) r * ld) * 4, row.length);
        }
    }

    private static void validBatchCol2imF32(MemorySegment col, long colOff, int ld, int images, ConvGeometry g,
            MemorySegment x, long xOff, long imageStride, int c0, int c1) {
        int kk = g.kH() * g.kW();
        int inPlane = g.inPlane();
        int p = g.outPlane();
        float[] planes = new float[images * inPlane];
        float[] row = new float[images * p];
        for (int c = c0; c < c1; c++) {
            long at = xOff + (long) c * inPlane;
            planes(x, at, imageStride, images, planes, inPlane, true);
            for (int k = 0; k < kk; k++) {
                MemorySegment.copy(col, ValueLayout.JAVA_FLOAT, (colOff + (long) (c * kk + k) * ld) * 4, row, 0,
                        row.length);
                int shift = shift(g, k);
                for (int n = 0; n < images; n++) {
                    addRuns(row, n * p, g, planes, n * inPlane + shift);
                }
            }
            planes(x, at, imageStride, images, planes, inPlane, false);
        }
    }

    /** Where kernel position {@code k} (row-major over the kernel) starts in a valid convolution's input plane. */
    private static int shift(ConvGeometry g, int k) {
        return (k / g.kW()) * g.inW() + k % g.kW();
    }

    /** Copies one plane of each image between the segment ({@code imageStride} apart) and a packed heap array. */
    private static void planes(MemorySegment x, long at, long imageStride, int images, float[] heap, int inPlane,
            boolean read) {
        for (int n = 0; n < images; n++) {
            long bytes = (at + n * imageStride) * 4;
            if (read) {
                MemorySegment.copy(x, ValueLayout.JAVA_FLOAT, bytes, heap, n * inPlane, inPlane);
            } else {
                MemorySegment.copy(heap, n * inPlane, x, ValueLayout.JAVA_FLOAT, bytes, inPlane);
            }
        }
    }

    /**
     * The {@code outH} runs of {@code outW} elements from {@code in[from..]} (rows inW apart) into {@code out[to..]}.
     */
    private static void gatherRuns(float[] in, int from, ConvGeometry g, float[] out, int to) {
        int outW = g.outW();
        int inW = g.inW();
        if (outW == F8.length()) {
            // One vector per run (the tutorial network's 8x8 conv2 output): no inner loop around it.
            for (int oh = 0; oh < g.outH(); oh++, from += inW, to += outW) {
                FloatVector.fromArray(F8, in, from).intoArray(out, to);
            }
            return;
        }
        boolean vectors = outW % F8.length() == 0;
        for (int oh = 0; oh < g.outH(); oh++, from += inW, to += outW) {
            if (!vectors) {
                System.arraycopy(in, from, out, to, outW);
                continue;
            }
            for (int j = 0; j < outW; j += F8.length()) {
                FloatVector.fromArray(F8, in, from + j).intoArray(out, to + j);
            }
        }
    }

    /**
     * Adds the {@code outH} runs of {@code outW} elements at {@code row[from..]} into {@code plane[to..]} (rows inW
     * apart).
     */
    private static void addRuns(float[] row, int from, ConvGeometry g, float[] plane, int to) {
        // Scalar on purpose: runs are 8 or 24 floats, and FloatVector.add here was compiled against the type profile
        // of every species' add in the JVM; its vectors ended up boxed, 0.7 GB/s of garbage in a training step.
        int outW = g.outW();
        int inW = g.inW();
        for (int oh = 0; oh < g.outH(); oh++, from += outW, to += inW) {
            for (int j = 0; j < outW; j++) {
                plane[to + j] += row[from + j];
            }
        }
    }

    /**
     * Stride 1, no padding, no dilation ("valid" convolution, as the tutorial network's): every column row
     * is {@code outH} runs of {@code outW} input elements. Its float32 kernels below work on heap copies:
     * those runs are short (8 or 24 floats), and per-run segment accesses cost more than the data they move.
     */
    private static boolean isValidUnitStride(ConvGeometry g) {
        return g.pH() == 0 && g.pW() == 0 && g.sH() == 1 && g.sW() == 1 && g.dH() == 1 && g.dW() == 1;
    }

    /**
     * Column rows {@code [r0, r1)} of a valid unit-stride float32 im2col, through heap arrays: each row is
     * gathered into an array (runs whose length is a multiple of 8, the tutorial network's 24 and 8, as 8-float
     * vectors, where an arraycopy per run cost more than its data) and written to the columns in one copy.
     */
    private static void validIm2colF32(MemorySegment x, long xOff, ConvGeometry g, MemorySegment col, long colOff,
            int ld, int r0, int r1) {
        int kk = g.kH() * g.kW();
        int inPlane = g.inPlane();
        int c0 = r0 / kk;
        int c1 = (r1 - 1) / kk + 1;
        float[] in = new float[(c1 - c0) * inPlane];
        MemorySegment.copy(x, ValueLayout.JAVA_FLOAT, (xOff + (long) c0 * inPlane) * 4, in, 0, in.length);
        float[] row = new float[g.outPlane()];
        for (int r = r0; r < r1; r++) {
            int k = r % kk;
            gatherRuns(in, (r / kk - c0) * inPlane + shift(g, k), g, row, 0);
            MemorySegment.copy(row, 0, col, ValueLayout.JAVA_FLOAT, (colOff + (long) r * ld) * 4, row.length);
        }
    }

    /**
     * Channels {@code [c0, c1)} of a valid unit-stride float32 col2im, accumulated in a heap array; column runs
     * whose length is a multiple of 8 are added as 8-float vectors read straight from the columns.
     */
    private static void validCol2imF32(MemorySegment col, long colOff, int ld, ConvGeometry g, MemorySegment x,
            long xOff, int c0, int c1) {
        int kk = g.kH() * g.kW();
        int outW = g.outW();
        int outH = g.outH();
        int inW = g.inW();
        boolean vectors = outW % F8.length() == 0;
        float[] plane = new float[g.inPlane()];
        float[] row = vectors ? null : new float[g.outPlane()];
        for (int c = c0; c < c1; c++) {
            long planeOff = (xOff + (long) c * plane.length) * 4;
            MemorySegment.copy(x, ValueLayout.JAVA_FLOAT, planeOff, plane, 0, plane.length);
            for (int k = 0; k < kk; k++) {
                long from = (colOff + (long) (c * kk + k) * ld) * 4;
                int base = shift(g, k);
                if (vectors) {
                    for (int oh = 0; oh < outH; oh++) {
                        int dst = base + oh * inW;
                        long src = from + (long) oh * outW * 4;
                        for (int j = 0; j < outW; j += F8.length()) {
                            FloatVector.fromArray(F8, plane, dst + j)
                                    .add(FloatVector.fromMemorySegment(F8, col, src + j * 4L, ORDER))
                                    .intoArray(plane, dst + j);
                        }
                    }
                    continue;
                }
                MemorySegment.copy(col, ValueLayout.JAVA_FLOAT, from, row, 0, row.length);
                for (int oh = 0; oh < outH; oh++) {
                    int dst = base + oh * inW;
                    int src = oh * outW;
                    for (int j = 0; j < outW; j++) {
                        plane[dst + j] += row[src + j];
                    }
                }
            }
            MemorySegment.copy(plane, 0, x, ValueLayout.JAVA_FLOAT, planeOff, plane.length);
        }
    }

    /**
     * A same-plane geometry ({@link ConvGeometry#isSamePlane}): a column row is then the input plane shifted
     * by {@code dh*W + dw}, so it is one bulk copy plus the zeroing of the rows and edge columns that fall
     * in the padding.
     */
    private static boolean samePlane(ConvGeometry g) {
        return g.isSamePlane();
    }

    /**
     * Where the column row of kernel tap {@code (ki, kj)} of a same-plane geometry meets the input: output
     * rows {@code [lo, hi)} read inside it, starting at plane element {@code src} (shifted by
     * {@code dh*W + dw}); of the {@code (hi-lo)*W} elements of that band, {@code [skip, end)} lie inside the
     * plane, and the rest are edge columns that read the padding.
     */
    private record Band(int w, int h, int dw, int lo, int hi, long src, long skip, long end) {
        static Band of(ConvGeometry g, int ki, int kj) {
            int w = g.inW();
            int h = g.inH();
            int dh = ki * g.dH() - g.pH();
            int dw = kj * g.dW() - g.pW();
            int lo = Math.min(h, Math.max(0, -dh));
            int hi = Math.max(lo, Math.min(h, h - dh));
            long src = (long) (lo + dh) * w + dw;
            long skip = Math.max(0, -src);
            long end = Math.min((long) (hi - lo) * w, (long) h * w - src);
            return new Band(w, h, dw, lo, hi, src, skip, end);
        }
    }

    private static void shiftedCopy(MemorySegment x, long plane, ConvGeometry g, int ki, int kj, MemorySegment col,
            long out, boolean isFloat) {
        Band b = Band.of(g, ki, kj);
        fillZero(col, out, b.lo() * b.w(), isFloat);
        fillZero(col, out + (long) b.hi() * b.w(), (b.h() - b.hi()) * b.w(), isFloat);
        int es = isFloat ? 4 : 8;
        if (b.end() > b.skip()) {
            MemorySegment.copy(x, (plane + b.src() + b.skip()) * es, col,
                    (out + (long) b.lo() * b.w() + b.skip()) * es, (b.end() - b.skip()) * es);
        }
        zeroEdgeColumns(col, out, b, isFloat);
    }

    /** Zeroes, in the band's rows of a column row, the columns that read left or right of the input. */
    private static void zeroEdgeColumns(MemorySegment col, long out, Band b, boolean isFloat) {
        int n = Math.min(Math.abs(b.dw()), b.w());
        if (n == 0) {
            return;
        }
        for (int oh = b.lo(); oh < b.hi(); oh++) {
            long rowStart = out + (long) oh * b.w();
            fillZero(col, b.dw() < 0 ? rowStart : rowStart + b.w() - n, n, isFloat);
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
            // Unit stride: the valid part of the row is one contiguous run of the input (none when the tap
            // lies wholly in the padding).
            int es = isFloat ? 4 : 8;
            if (hi - lo >= 64) {
                MemorySegment.copy(x, (rowOff + lo + base) * es, col, (o + lo) * es, (long) (hi - lo) * es);
                return;
            }
            if (isFloat) {
                // Short rows (small images): masked vector moves beat the bulk copy's set-up.
                copyRunF32(x, rowOff + lo + base, col, o + lo, hi - lo);
                return;
            }
            for (int j = lo; j < hi; j++) {
                col.setAtIndex(ValueLayout.JAVA_LONG, o + j, x.getAtIndex(ValueLayout.JAVA_LONG, rowOff + j + base));
            }
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
        col2im(col, colOff, g.outPlane(), channels, g, x, xOff, isFloat);
    }

    /** As the other col2im, reading column rows {@code ld} elements apart. */
    public static void col2im(MemorySegment col, long colOff, int ld, int channels, ConvGeometry g, MemorySegment x,
            long xOff, boolean isFloat) {
        int p = g.outPlane();
        int kk = g.kH() * g.kW();
        if (isFloat && isValidUnitStride(g)) {
            Threads.parallelFor(0, channels, Threads.grain((long) kk * p),
                    (c0, c1) -> validCol2imF32(col, colOff, ld, g, x, xOff, c0, c1));
            return;
        }
        // One channel per task: rows of the same channel add into the same plane.
        Threads.parallelFor(0, channels, Threads.grain((long) kk * p),
                (c0, c1) -> {
            for (int c = c0; c < c1; c++) {
                long plane = xOff + (long) c * g.inPlane();
                for (int k = 0; k < kk; k++) {
                    int ki = k / g.kW();
                    int kj = k % g.kW();
                    long in = colOff + (long) (c * kk + k) * ld;
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
        Band b = Band.of(g, ki, kj);
        zeroEdgeColumns(col, in, b, true);
        if (b.end() > b.skip()) {
            addRunF32(col, in + (long) b.lo() * b.w() + b.skip(), x, plane + b.src() + b.skip(),
                    (int) (b.end() - b.skip()));
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

    /**
     * {@code dst[di .. di+n) = src[si .. si+n)}: 256-bit vectors, which fit the short rows of small images
     * (8, 24, 56 floats) better than the widest ones, then a scalar tail.
     */
    private static void copyRunF32(MemorySegment src, long si, MemorySegment dst, long di, int n) {
        int i = 0;
        for (; i <= n - F8.length(); i += F8.length()) {
            FloatVector.fromMemorySegment(F8, src, (si + i) * 4, ORDER).intoMemorySegment(dst, (di + i) * 4, ORDER);
        }
        for (; i < n; i++) {
            dst.setAtIndex(ValueLayout.JAVA_FLOAT, di + i, src.getAtIndex(ValueLayout.JAVA_FLOAT, si + i));
        }
    }

    /** {@code x[xi .. xi+n) += col[ci .. ci+n)} with 256-bit vectors (see {@link #copyRunF32}). */
    private static void addRunF32(MemorySegment col, long ci, MemorySegment x, long xi, int n) {
        int i = 0;
        for (int step = F8.length(); i <= n - step; i += step) {
            FloatVector a = FloatVector.fromMemorySegment(F8, x, (xi + i) * 4, ORDER);
            FloatVector b = FloatVector.fromMemorySegment(F8, col, (ci + i) * 4, ORDER);
            a.add(b).intoMemorySegment(x, (xi + i) * 4, ORDER);
        }
        for (; i < n; i++) {
            x.setAtIndex(ValueLayout.JAVA_FLOAT, xi + i, x.getAtIndex(ValueLayout.JAVA_FLOAT, xi + i)
                    + col.getAtIndex(ValueLayout.JAVA_FLOAT, ci + i));
        }
    }
}
