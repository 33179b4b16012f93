package io.tensorbus.internal.tensor;

import io.tensorbus.tensor.Threads;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.IntVector;
import jdk.incubator.vector.VectorMask;
import jdk.incubator.vector.VectorOperators;
import jdk.incubator.vector.VectorSpecies;

/**
 * Max and average pooling over contiguous planes ({@code [planes, H, W]}), forward and backward. Windows
 * are given per output row and column ({@link Windows}), which covers strided, padded and adaptive pooling.
 * Element offsets; float32 when {@code isFloat}, else float64.
 */
public final class Pool2d {
    private static final VectorSpecies<Float> FS = FloatVector.SPECIES_256;
    private static final VectorSpecies<Integer> IS = IntVector.SPECIES_256;

    private Pool2d() {
    }

    /**
     * Input ranges of every output row ({@code h0[oh]..h1[oh]}) and column, clamped to the input, and the
     * divisor that average pooling uses for each output position.
     */
    public record Windows(int inH, int inW, int[] h0, int[] h1, int[] w0, int[] w1, int[] padH, int[] padW,
            boolean countPadding) {

        /**
         * True when every window is {@code [2o, 2o + 2)} on both axes (kernel 2, stride 2, no padding, none
         * clipped): the pooling of most CNNs, which has a branch-free kernel.
         */
        boolean isPairs() {
            return isPairs(h0, h1) && isPairs(w0, w1);
        }

        private static boolean isPairs(int[] lo, int[] hi) {
            for (int o = 0; o < lo.length; o++) {
                if (lo[o] != 2 * o || hi[o] != 2 * o + 2) {
                    return false;
                }
            }
            return true;
        }

        /** Output height. */
        public int outH() {
            return h0.length;
        }

        /** Output width. */
        public int outW() {
            return w0.length;
        }

        double divisor(int oh, int ow) {
            return countPadding ? (double) padH[oh] * padW[ow] : (double) (h1[oh] - h0[oh]) * (w1[ow] - w0[ow]);
        }

        /** Windows of a strided, padded pooling (PyTorch's avg/max pool rules for the window sizes). */
        public static Windows strided(ConvGeometry g, boolean countPadding) {
            int[][] h = axis(g.inH(), g.outH(), g.kH(), g.sH(), g.pH());
            int[][] w = axis(g.inW(), g.outW(), g.kW(), g.sW(), g.pW());
            return new Windows(g.inH(), g.inW(), h[0], h[1], w[0], w[1], h[2], w[2], countPadding);
        }

        private static int[][] axis(int in, int out, int k, int s, int p) {
            int[] lo = new int[out];
            int[] hi = new int[out];
            int[] size = new int[out];
            for (int o = 0; o < out; o++) {
                int start = o * s - p;
                int end = Math.min(start + k, in + p);
                size[o] = end - start;
                lo[o] = Math.max(start, 0);
                hi[o] = Math.min(end, in);
            }
            return new int[][] {lo, hi, size};
        }

        /** Windows of adaptive pooling: {@code [floor(i*in/out), ceil((i+1)*in/out))}. */
        public static Windows adaptive(int inH, int inW, int outH, int outW) {
            int[][] h = adaptiveAxis(inH, outH);
            int[][] w = adaptiveAxis(inW, outW);
            return new Windows(inH, inW, h[0], h[1], w[0], w[1], h[2], w[2], false);
        }

        private static int[][] adaptiveAxis(int in, int out) {
            int[] lo = new int[out];
            int[] hi = new int[out];
            for (int o = 0; o < out; o++) {
                lo[o] = (int) Math.floorDiv((long) o * in, out);
                hi[o] = (int) -Math.floorDiv(-(long) (o + 1) * in, out);
            }
            int[] size = new int[out];
            for (int o = 0; o < out; o++) {
                size[o] = hi[o] - lo[o];
            }
            return new int[][] {lo, hi, size};
        }
    }

    /** Max pooling; writes values and each maximum's flat index within its input plane (int64). */
    public static void maxForward(MemorySegment x, int planes, Windows w, MemorySegment out, MemorySegment idx,
            boolean isFloat) {
        int inPlane = w.inH() * w.inW();
        int outPlane = w.outH() * w.outW();
        boolean pairs = isFloat && w.isPairs();
        Threads.parallelFor(0, planes, Threads.grain((long) w.inH() * w.inW()), (p0, p1) -> {
            if (pairs) {
                max2x2F32(x, p0, p1, w, out, idx);
                return;
            }
            for (int p = p0; p < p1; p++) {
                long xb = (long) p * inPlane;
                long ob = (long) p * outPlane;
                for (int oh = 0; oh < w.outH(); oh++) {
                    for (int ow = 0; ow < w.outW(); ow++) {
                        long o = ob + oh * w.outW() + ow;
                        int at = isFloat ? argmaxF32(x, xb, w, oh, ow) : argmax(x, xb, w, oh, ow);
                        Access.store(out, o, Access.load(x, xb + at, isFloat), isFloat);
                        idx.setAtIndex(ValueLayout.JAVA_LONG, o, at);
                    }
                }
            }
        });
    }

    /**
     * {@link #maxForward} of float32 planes {@code [p0, p1)} with 2x2 windows at stride 2: the same result as
     * the general scan (first maximum in row-major order, the first NaN wins). Eight windows at a time: each
     * window's four elements are gathered into four vectors and compared with masks, because scalar
     * compares mispredict on half of the elements of real activations. Each plane is copied to the heap
     * first: gathers take arrays, and short array loops lose their bounds checks.
     */
    private static void max2x2F32(MemorySegment x, int p0, int p1, Windows w, MemorySegment out,
            MemorySegment idx) {
        int inW = w.inW();
        int inPlane = w.inH() * inW;
        int outPlane = w.outH() * w.outW();
        int[] topLeft = new int[outPlane];
        for (int o = 0; o < outPlane; o++) {
            topLeft[o] = 2 * (o / w.outW()) * inW + 2 * (o % w.outW());
        }
        float[] in = new float[inPlane];
        float[] max = new float[outPlane];
        int[] arg = new int[outPlane];
        long[] arg64 = new long[outPlane];
        for (int p = p0; p < p1; p++) {
            MemorySegment.copy(x, ValueLayout.JAVA_FLOAT, (long) p * inPlane * 4, in, 0, inPlane);
            int o = 0;
            for (; o <= outPlane - FS.length(); o += FS.length()) {
                max2x2Vector(in, topLeft, o, inW, max, arg);
            }
            for (; o < outPlane; o++) {
                max2x2Scalar(in, topLeft[o], inW, max, arg, o);
            }
            for (int i = 0; i < outPlane; i++) {
                arg64[i] = arg[i];
            }
            MemorySegment.copy(max, 0, out, ValueLayout.JAVA_FLOAT, (long) p * outPlane * 4, outPlane);
            MemorySegment.copy(arg64, 0, idx, ValueLayout.JAVA_LONG, (long) p * outPlane * 8, outPlane);
        }
    }

    private static void max2x2Vector(float[] in, int[] topLeft, int o, int inW, float[] max, int[] arg) {
        IntVector i0 = IntVector.fromArray(IS, topLeft, o);
        FloatVector m = FloatVector.fromArray(FS, in, 0, topLeft, o);
        IntVector at = i0;
        int[] offsets = {1, inW, inW + 1};
        for (int d : offsets) {
            FloatVector v = FloatVector.fromArray(FS, in, d, topLeft, o);
            // Taken when larger, or a NaN over a number: ties keep the earlier element, as the scan.
            VectorMask<Float> take = v.compare(VectorOperators.GT, m)
                    .or(v.test(VectorOperators.IS_NAN).andNot(m.test(VectorOperators.IS_NAN)));
            m = m.blend(v, take);
            at = at.blend(i0.add(d), take.cast(IS));
        }
        m.intoArray(max, o);
        at.intoArray(arg, o);
    }

    private static void max2x2Scalar(float[] in, int i0, int inW, float[] max, int[] arg, int o) {
        float m = in[i0];
        int at = i0;
        for (int c : new int[] {i0 + 1, i0 + inW, i0 + inW + 1}) {
            float v = in[c];
            boolean take = v > m | (v != v & m == m);
            m = take ? v : m;
            at = take ? c : at;
        }
        max[o] = m;
        arg[o] = at;
    }

    /** Plane index of the first maximum of a window (a NaN counts as the maximum), float64. */
    private static int argmax(MemorySegment x, long xb, Windows w, int oh, int ow) {
        double best = Double.NEGATIVE_INFINITY;
        int at = w.h0()[oh] * w.inW() + w.w0()[ow];
        for (int ih = w.h0()[oh]; ih < w.h1()[oh]; ih++) {
            for (int iw = w.w0()[ow]; iw < w.w1()[ow]; iw++) {
                double v = x.getAtIndex(ValueLayout.JAVA_DOUBLE, xb + ih * w.inW() + iw);
                if (v > best || v != v) {
                    best = v;
                    at = ih * w.inW() + iw;
                    if (v != v) {
                        return at;
                    }
                }
            }
        }
        return at;
    }

    /** As {@link #argmax} for float32, the hot case. */
    private static int argmaxF32(MemorySegment x, long xb, Windows w, int oh, int ow) {
        float best = Float.NEGATIVE_INFINITY;
        int at = w.h0()[oh] * w.inW() + w.w0()[ow];
        for (int ih = w.h0()[oh]; ih < w.h1()[oh]; ih++) {
            for (int iw = w.w0()[ow]; iw < w.w1()[ow]; iw++) {
                float v = x.getAtIndex(ValueLayout.JAVA_FLOAT, xb + ih * w.inW() + iw);
                if (v > best || v != v) {
                    best = v;
                    at = ih * w.inW() + iw;
                    if (v != v) {
                        return at;
                    }
                }
            }
        }
        return at;
    }

    /** Adds each output gradient into its maximum's input position ({@code gx} zeroed by the caller). */
    public static void maxBackward(MemorySegment gy, MemorySegment idx, int planes, Windows w, MemorySegment gx,
            boolean isFloat) {
        int inPlane = w.inH() * w.inW();
        int outPlane = w.outH() * w.outW();
        Threads.parallelFor(0, planes, Threads.grain((long) w.inH() * w.inW()), (p0, p1) -> {
            for (int p = p0; p < p1; p++) {
                for (int o = 0; o < outPlane; o++) {
                    long src = (long) p * outPlane + o;
                    long dst = (long) p * inPlane + idx.getAtIndex(ValueLayout.JAVA_LONG, src);
                    Access.store(gx, dst, Access.load(gx, dst, isFloat) + Access.load(gy, src, isFloat), isFloat);
                }
            }
        });
    }

    /** Average pooling: each output is its window's sum over {@link Windows#divisor}. */
    public static void avgForward(MemorySegment x, int planes, Windows w, MemorySegment out, boolean isFloat) {
        int inPlane = w.inH() * w.inW();
        int outPlane = w.outH() * w.outW();
        Threads.parallelFor(0, planes, Threads.grain((long) w.inH() * w.inW()), (p0, p1) -> {
            for (int p = p0; p < p1; p++) {
                long xb = (long) p * inPlane;
                for (int oh = 0; oh < w.outH(); oh++) {
                    for (int ow = 0; ow < w.outW(); ow++) {
                        double sum = 0;
                        for (int ih = w.h0()[oh]; ih < w.h1()[oh]; ih++) {
                            for (int iw = w.w0()[ow]; iw < w.w1()[ow]; iw++) {
                                sum += Access.load(x, xb + ih * w.inW() + iw, isFloat);
                            }
                        }
                        Access.store(out, (long) p * outPlane + oh * w.outW() + ow, sum / w.divisor(oh, ow), isFloat);
                    }
                }
            }
        });
    }

    /** Spreads each output gradient evenly over its window ({@code gx} zeroed by the caller). */
    public static void avgBackward(MemorySegment gy, int planes, Windows w, MemorySegment gx, boolean isFloat) {
        int inPlane = w.inH() * w.inW();
        int outPlane = w.outH() * w.outW();
        Threads.parallelFor(0, planes, Threads.grain((long) w.inH() * w.inW()), (p0, p1) -> {
            for (int p = p0; p < p1; p++) {
                long xb = (long) p * inPlane;
                for (int oh = 0; oh < w.outH(); oh++) {
                    for (int ow = 0; ow < w.outW(); ow++) {
                        double g = Access.load(gy, (long) p * outPlane + oh * w.outW() + ow, isFloat) / w.divisor(oh,
                                ow);
                        for (int ih = w.h0()[oh]; ih < w.h1()[oh]; ih++) {
                            for (int iw = w.w0()[ow]; iw < w.w1()[ow]; iw++) {
                                long i = xb + ih * w.inW() + iw;
                                Access.store(gx, i, Access.load(gx, i, isFloat) + g, isFloat);
                            }
                        }
                    }
                }
            }
        });
    }
}
