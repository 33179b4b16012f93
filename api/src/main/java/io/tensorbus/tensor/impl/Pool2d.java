package io.tensorbus.tensor.impl;

import io.tensorbus.tensor.Threads;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * Max and average pooling over contiguous planes ({@code [planes, H, W]}), forward and backward. Windows
 * are given per output row and column ({@link Windows}), which covers strided, padded and adaptive pooling.
 * Element offsets; float32 when {@code isFloat}, else float64.
 */
public final class Pool2d {
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
     * {@link #maxForward} of float32 planes {@code [p0, p1)} with 2x2 windows at stride 2. The same result as
     * the general scan (first maximum in row-major order, the first NaN wins), chosen with selects instead
     * of data-dependent branches, which mispredict on half of the elements of real activations. Each plane
     * is copied to the heap first: array loops lose their bounds checks, segment accessors here did not.
     */
    private static void max2x2F32(MemorySegment x, int p0, int p1, Windows w, MemorySegment out,
            MemorySegment idx) {
        int inW = w.inW();
        int outW = w.outW();
        int inPlane = w.inH() * inW;
        int outPlane = w.outH() * outW;
        float[] in = new float[inPlane];
        float[] max = new float[outPlane];
        long[] arg = new long[outPlane];
        for (int p = p0; p < p1; p++) {
            MemorySegment.copy(x, ValueLayout.JAVA_FLOAT, (long) p * inPlane * 4, in, 0, inPlane);
            for (int oh = 0; oh < w.outH(); oh++) {
                int top = 2 * oh * inW;
                int o = oh * outW;
                for (int ow = 0; ow < outW; ow++) {
                    int i0 = top + 2 * ow;
                    int i2 = i0 + inW;
                    float a = in[i0];
                    float b = in[i0 + 1];
                    float c = in[i2];
                    float d = in[i2 + 1];
                    // Taken when larger, or a NaN over a number: ties keep the earlier element, as the scan.
                    boolean tb = b > a | (b != b & a == a);
                    float m = tb ? b : a;
                    int at = tb ? i0 + 1 : i0;
                    boolean tc = c > m | (c != c & m == m);
                    m = tc ? c : m;
                    at = tc ? i2 : at;
                    boolean td = d > m | (d != d & m == m);
                    max[o + ow] = td ? d : m;
                    arg[o + ow] = td ? i2 + 1 : at;
                }
            }
            MemorySegment.copy(max, 0, out, ValueLayout.JAVA_FLOAT, (long) p * outPlane * 4, outPlane);
            MemorySegment.copy(arg, 0, idx, ValueLayout.JAVA_LONG, (long) p * outPlane * 8, outPlane);
        }
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
                        double g = Access.load(gy, (long) p * outPlane + oh * w.outW() + ow, isFloat) / w.divisor(oh, ow);
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
