package io.tensorbus.internal.tensor;

import io.tensorbus.DType;
import io.tensorbus.spi.KernelSource;

/**
 * The device kernels of tensor operations beyond a device runtime's own arithmetic, written once in the kernel
 * dialect of {@link KernelSource} and compiled by each runtime for its devices: strided copies (any view made
 * contiguous), element-wise functions and their gradients, comparisons, sums and softmax along rows, the largest
 * element of each row, convolution columns, pooling, fused optimizer steps, dropout masks ({@link Philox}) and
 * moves of elements by offset for the index operations. They compute as the host's kernels do: functions of
 * float32 elements in float64, rounded once; sums in float64. Element-wise kernels take their second operand with
 * a stride of 1 or 0 (one element for all).
 *
 * <p>Each floating dtype has its own program ({@link #program}); the copies, which only move bytes, have one
 * ({@link #copies}) for elements of 1, 2, 4 and 8 bytes.
 */
public final class DeviceTensorKernels {
    /** The most dimensions a strided copy walks (after merging the ones laid out together). */
    public static final int MAX_COPY_DIMS = 6;
    /** The work-group size of {@link #SUM_ROWS}: one group sums one row. */
    public static final int ROW_GROUP = 64;

    /** {@code (x, y, n, op, p0, p1)}: {@code y = f(x)} for the {@code UNARY_*} codes. */
    public static final String UNARY = "unary";
    /** {@code (a, b, out, n, bStride, op)}: {@code out = f(a, b)} for the {@code BINARY_*} codes. */
    public static final String BINARY = "binary";
    /** {@code (a, b, out(bool), n, bStride, op)}: the {@code COMPARE_*} comparisons as 0 or 1. */
    public static final String COMPARE = "compare";
    /** {@link #SUM_ROWS} of int64 tensors (wrapping as Java's {@code long} does), in the float64 program. */
    public static final String SUM_ROWS_INT64 = "sum_rows_int64";
    /** {@link #COMPARE} of int64 tensors, in the float64 program. */
    public static final String COMPARE_INT64 = "compare_int64";
    /** {@code (x, y, cols)}, over {@code rows * ROW_GROUP} items in groups of {@link #ROW_GROUP}: row sums. */
    public static final String SUM_ROWS = "sum_rows";
    /** {@code (x, y, rows, cols, log)}: softmax (or log-softmax) of each row. */
    public static final String SOFTMAX_ROWS = "softmax_rows";
    /** {@code (g, y, gx, rows, cols, log)}: the gradient of softmax (log-softmax) rows from their output. */
    public static final String SOFTMAX_BACKWARD_ROWS = "softmax_backward_rows";
    /** {@code (x, values, indices(int64), rows, cols, max)}: each row's largest (smallest) element, first NaN. */
    public static final String MAX_ROWS = "max_rows";

    /**
     * {@code (x, col, n, c, h, w, outH, outW, kH, kW, sH, sW, pH, pW, dH, dW)}: the columns {@code [n, c*kH*kW,
     * outH*outW]} of a convolution's input, zero where the window reaches into the padding.
     */
    public static final String IM2COL = "im2col";
    /** {@code (col, x, <as IM2COL>)}: the input gradient from column gradients, each pixel summing its windows. */
    public static final String COL2IM = "col2im";
    /**
     * {@code (x, y, indices(int64), windows(int32), planes, inH, inW, outH, outW)}: the largest element of each
     * window (the first NaN, else the first of equals) and its index in the plane. {@code windows} holds, one array
     * after the other, each output row's first and end input rows, each output column's first and end input
     * columns, then the padded window heights and widths, as {@link Pool2d.Windows} has them.
     */
    public static final String MAX_POOL = "max_pool";
    /** {@code (g, indices, gx, windows, planes, inH, inW, outH, outW)}: each pixel sums the gradients it won. */
    public static final String MAX_POOL_BACKWARD = "max_pool_backward";
    /** {@code (x, y, windows, planes, inH, inW, outH, outW, countPadding)}: each window's mean. */
    public static final String AVG_POOL = "avg_pool";
    /** {@code (g, gx, windows, planes, inH, inW, outH, outW, countPadding)}: each pixel's share of its windows. */
    public static final String AVG_POOL_BACKWARD = "avg_pool_backward";

    /**
     * {@code (p, g, buf, n, lr, momentum, dampening, weightDecay, nesterov, first)}: one SGD step of a parameter in
     * one launch, as {@code SGD}'s update does it ({@code buf} unused without momentum).
     */
    public static final String SGD_STEP = "sgd_step";
    /**
     * {@code (p, g, expAvg, expAvgSq, n, lr, beta1, beta2, eps, weightDecay, decoupled, stepSize,
     * biasCorrection2Sqrt)}: one Adam (AdamW when decoupled) step of a parameter in one launch.
     */
    public static final String ADAM_STEP = "adam_step";

    /**
     * {@code (mask, n, seed, offset, keep, scale)}: dropout's mask, {@code scale} where {@link Philox}'s draw at
     * {@code (seed, offset)} is below {@code keep}, else 0.
     */
    public static final String DROPOUT_MASK = "dropout_mask";

    /**
     * {@code (dst, src, targets(int64), starts(int64), order(int64), groups)}: for each group {@code k}, adds the
     * {@code src} elements {@code order[starts[k]..starts[k+1])} one by one to {@code dst[targets[k]]}, each sum
     * rounded to the element type as the host's additions are; the targets are distinct, so no two work items
     * write one element.
     */
    public static final String ADD_AT = "add_at";

    /** Unary codes. */
    public static final int UNARY_RELU = 0;
    public static final int UNARY_EXP = 1;
    public static final int UNARY_LOG = 2;
    public static final int UNARY_SQRT = 3;
    public static final int UNARY_ABS = 4;
    public static final int UNARY_SIGMOID = 5;
    public static final int UNARY_TANH = 6;
    public static final int UNARY_SIGN = 7;
    public static final int UNARY_POW = 8;
    public static final int UNARY_CLAMP = 9;
    public static final int UNARY_CLAMP_MASK = 10;

    /** Binary codes. */
    public static final int BINARY_POW = 0;
    public static final int BINARY_RELU_GRAD = 1;
    public static final int BINARY_POW_GRAD = 2;
    public static final int BINARY_XLOG = 3;
    public static final int BINARY_IS_MAX = 4;

    /** Comparison codes. */
    public static final int COMPARE_EQ = 0;
    public static final int COMPARE_GT = 1;
    public static final int COMPARE_LT = 2;

    private static final String REAL_KERNELS = """
            DEVICE_FN double unary_op(double x, int op, double p0, double p1) {
                switch (op) {
                    case 0: return !(x <= 0) ? x : 0.0;
                    case 1: return exp(x);
                    case 2: return log(x);
                    case 3: return sqrt(x);
                    case 4: return fabs(x);
                    case 5: return 1.0 / (1.0 + exp(-x));
                    case 6: return tanh(x);
                    case 7: return x > 0 ? 1.0 : x < 0 ? -1.0 : x;
                    case 8: return pow(x, p0);
                    case 9: return isnan(x) ? x : x < p0 ? p0 : x > p1 ? p1 : x;
                    default: return x >= p0 && x <= p1 ? 1.0 : 0.0;
                }
            }

            DEVICE_FN double binary_op(double a, double b, int op) {
                switch (op) {
                    case 0: return pow(a, b);
                    case 1: return b <= 0 ? 0.0 : a;
                    case 2: return b == 0 ? 0.0 : b * pow(a, b - 1);
                    case 3: return a == 0 && b >= 0 ? 0.0 : log(a);
                    default: return a == b || (isnan(a) && isnan(b)) ? 1.0 : 0.0;
                }
            }

            KERNEL void unary(GLOBAL const REAL* x, ulong xo, GLOBAL REAL* y, ulong yo, ulong n, int op, double p0,
                    double p1) {
                size_t i = GID;
                if (i < n) y[yo + i] = (REAL) unary_op((double) x[xo + i], op, p0, p1);
            }

            KERNEL void binary(GLOBAL const REAL* a, ulong ao, GLOBAL const REAL* b, ulong bo, GLOBAL REAL* out,
                    ulong oo, ulong n, ulong bs, int op) {
                size_t i = GID;
                if (i < n) out[oo + i] = (REAL) binary_op((double) a[ao + i], (double) b[bo + i * bs], op);
            }

            KERNEL void dropout_mask(GLOBAL REAL* mask, ulong mo, ulong n, ulong seed, ulong offset, double keep,
                    double scale) {
                size_t i = GID;
                if (i < n) mask[mo + i] = philox_uniform(seed, offset, i) < keep ? (REAL) scale : (REAL) 0;
            }

            KERNEL void add_at(GLOBAL REAL* dst, ulong dof, GLOBAL const REAL* src, ulong so,
                    GLOBAL const long* targets, ulong to, GLOBAL const long* starts, ulong sto,
                    GLOBAL const long* order, ulong oo, ulong groups) {
                size_t k = GID;
                if (k >= groups) return;
                ulong at = dof + (ulong) targets[to + k];
                REAL s = dst[at];
                for (long p = starts[sto + k]; p < starts[sto + k + 1]; p++) {
                    s = (REAL) ((double) s + (double) src[so + (ulong) order[oo + p]]);
                }
                dst[at] = s;
            }

            KERNEL void compare(GLOBAL const REAL* a, ulong ao, GLOBAL const REAL* b, ulong bo, GLOBAL uchar* out,
                    ulong oo, ulong n, ulong bs, int op) {
                size_t i = GID;
                if (i >= n) return;
                REAL x = a[ao + i];
                REAL y = b[bo + i * bs];
                out[oo + i] = (uchar) (op == 0 ? x == y : op == 1 ? x > y : x < y);
            }

            KERNEL void sum_rows(GLOBAL const REAL* x, ulong xo, GLOBAL REAL* y, ulong yo, ulong cols) {
                LOCAL_MEM double part[64];
                size_t row = GID / 64;
                size_t l = LID;
                double s = 0;
                for (ulong c = l; c < cols; c += 64) s += (double) x[xo + row * cols + c];
                part[l] = s;
                SYNC_LOCAL();
                if (l == 0) {
                    double t = 0;
                    for (int i = 0; i < 64; i++) t += part[i];
                    y[yo + row] = (REAL) t;
                }
            }

            KERNEL void softmax_rows(GLOBAL const REAL* x, ulong xo, GLOBAL REAL* y, ulong yo, ulong rows, ulong cols,
                    int logOut) {
                size_t r = GID;
                if (r >= rows) return;
                ulong base = r * cols;
                double m = (double) x[xo + base];
                for (ulong c = 1; c < cols; c++) {
                    double v = (double) x[xo + base + c];
                    if (isnan(v) || v > m) m = v;
                }
                double s = 0;
                for (ulong c = 0; c < cols; c++) s += exp((double) x[xo + base + c] - m);
                double ls = log(s);
                for (ulong c = 0; c < cols; c++) {
                    double v = (double) x[xo + base + c] - m;
                    y[yo + base + c] = (REAL) (logOut ? v - ls : exp(v) / s);
                }
            }

            KERNEL void softmax_backward_rows(GLOBAL const REAL* g, ulong go, GLOBAL const REAL* y, ulong yo,
                    GLOBAL REAL* gx, ulong gxo, ulong rows, ulong cols, int logOut) {
                size_t r = GID;
                if (r >= rows) return;
                ulong base = r * cols;
                double s = 0;
                for (ulong c = 0; c < cols; c++) {
                    double gv = (double) g[go + base + c];
                    s += logOut ? gv : gv * (double) y[yo + base + c];
                }
                for (ulong c = 0; c < cols; c++) {
                    double gv = (double) g[go + base + c];
                    double yv = (double) y[yo + base + c];
                    gx[gxo + base + c] = (REAL) (logOut ? gv - exp(yv) * s : yv * (gv - s));
                }
            }

            KERNEL void max_rows(GLOBAL const REAL* x, ulong xo, GLOBAL REAL* values, ulong vo, GLOBAL long* indices,
                    ulong io, ulong rows, ulong cols, int isMax) {
                size_t r = GID;
                if (r >= rows) return;
                ulong base = xo + r * cols;
                REAL best = x[base];
                long at = 0;
                for (ulong c = 1; c < cols && !isnan(best); c++) {
                    REAL v = x[base + c];
                    if (isnan(v) || (isMax ? v > best : v < best)) {
                        best = v;
                        at = (long) c;
                    }
                }
                values[vo + r] = best;
                indices[io + r] = at;
            }

            KERNEL void sgd_step(GLOBAL REAL* p, ulong po, GLOBAL const REAL* g, ulong go, GLOBAL REAL* buf, ulong bo,
                    ulong n, double lr, double momentum, double dampening, double wd, int nesterov, int first) {
                size_t i = GID;
                if (i >= n) return;
                REAL d = g[go + i];
                if (wd != 0.0) d = d + (REAL) wd * p[po + i];
                if (momentum != 0.0) {
                    REAL b = first ? d : fma(d, (REAL) (1.0 - dampening), buf[bo + i] * (REAL) momentum);
                    buf[bo + i] = b;
                    d = nesterov ? d + (REAL) momentum * b : b;
                }
                p[po + i] = fma(d, (REAL) (-lr), p[po + i]);
            }

            KERNEL void adam_step(GLOBAL REAL* p, ulong po, GLOBAL const REAL* g, ulong go, GLOBAL REAL* m, ulong mo,
                    GLOBAL REAL* v, ulong vo, ulong n, double lr, double beta1, double beta2, double eps, double wd,
                    int decoupled, double stepSize, double bc2sqrt) {
                size_t i = GID;
                if (i >= n) return;
                REAL pv = p[po + i];
                REAL gv = g[go + i];
                if (decoupled) {
                    pv = pv * (REAL) (1.0 - lr * wd);
                } else if (wd != 0.0) {
                    gv = gv + (REAL) wd * pv;
                }
                REAL mv = fma(gv, (REAL) (1.0 - beta1), m[mo + i] * (REAL) beta1);
                REAL vv = fma(gv * gv, (REAL) (1.0 - beta2), v[vo + i] * (REAL) beta2);
                m[mo + i] = mv;
                v[vo + i] = vv;
                REAL denom = (REAL) sqrt((double) vv) / (REAL) bc2sqrt + (REAL) eps;
                p[po + i] = fma(mv / denom, (REAL) (-stepSize), pv);
            }

            KERNEL void im2col(GLOBAL const REAL* x, ulong xo, GLOBAL REAL* col, ulong co, ulong n, ulong c, ulong h,
                    ulong w, ulong oh, ulong ow, ulong kh, ulong kw, ulong sh, ulong sw, ulong ph, ulong pw, ulong dh,
                    ulong dw) {
                size_t i = GID;
                ulong p = oh * ow;
                ulong k = c * kh * kw;
                if (i >= n * k * p) return;
                ulong img = i / (k * p);
                ulong r = i % (k * p);
                ulong kk = r / p;
                ulong pp = r % p;
                ulong ch = kk / (kh * kw);
                ulong ki = (kk / kw) % kh;
                ulong kj = kk % kw;
                long y = (long) ((pp / ow) * sh + ki * dh) - (long) ph;
                long xw = (long) ((pp % ow) * sw + kj * dw) - (long) pw;
                col[co + i] = (y >= 0 && y < (long) h && xw >= 0 && xw < (long) w)
                        ? x[xo + ((img * c + ch) * h + (ulong) y) * w + (ulong) xw] : (REAL) 0;
            }

            KERNEL void col2im(GLOBAL const REAL* col, ulong co, GLOBAL REAL* x, ulong xo, ulong n, ulong c, ulong h,
                    ulong w, ulong oh, ulong ow, ulong kh, ulong kw, ulong sh, ulong sw, ulong ph, ulong pw, ulong dh,
                    ulong dw) {
                size_t i = GID;
                if (i >= n * c * h * w) return;
                ulong xw = i % w;
                ulong y = (i / w) % h;
                ulong ch = (i / (w * h)) % c;
                ulong img = i / (w * h * c);
                ulong k = c * kh * kw;
                ulong p = oh * ow;
                double s = 0;
                for (ulong ki = 0; ki < kh; ki++) {
                    long t = (long) (y + ph) - (long) (ki * dh);
                    if (t < 0 || t % (long) sh != 0 || t / (long) sh >= (long) oh) continue;
                    for (ulong kj = 0; kj < kw; kj++) {
                        long u = (long) (xw + pw) - (long) (kj * dw);
                        if (u < 0 || u % (long) sw != 0 || u / (long) sw >= (long) ow) continue;
                        s += (double) col[co + (img * k + (ch * kh + ki) * kw + kj) * p + (ulong) (t / (long) sh) * ow
                                + (ulong) (u / (long) sw)];
                    }
                }
                x[xo + i] = (REAL) s;
            }

            KERNEL void max_pool(GLOBAL const REAL* x, ulong xo, GLOBAL REAL* y, ulong yo, GLOBAL long* idx, ulong io,
                    GLOBAL const int* win, ulong wo, ulong planes, ulong ih, ulong iw, ulong oh, ulong ow) {
                size_t i = GID;
                if (i >= planes * oh * ow) return;
                ulong pl = i / (oh * ow);
                ulong a = (i / ow) % oh;
                ulong b = i % ow;
                int h0 = win[wo + a];
                int h1 = win[wo + oh + a];
                int w0 = win[wo + 2 * oh + b];
                int w1 = win[wo + 2 * oh + ow + b];
                ulong base = xo + pl * ih * iw;
                long at = (long) h0 * (long) iw + w0;
                REAL best = x[base + at];
                for (int hh = h0; hh < h1; hh++) {
                    for (int ww = w0; ww < w1; ww++) {
                        long j = (long) hh * (long) iw + ww;
                        REAL v = x[base + j];
                        if (!isnan(best) && (isnan(v) || v > best)) {
                            best = v;
                            at = j;
                        }
                    }
                }
                y[yo + i] = best;
                idx[io + i] = at;
            }

            KERNEL void max_pool_backward(GLOBAL const REAL* g, ulong go, GLOBAL const long* idx, ulong io,
                    GLOBAL REAL* gx, ulong gxo, GLOBAL const int* win, ulong wo, ulong planes, ulong ih, ulong iw,
                    ulong oh, ulong ow) {
                size_t i = GID;
                if (i >= planes * ih * iw) return;
                ulong pl = i / (ih * iw);
                long pix = (long) (i % (ih * iw));
                int hh = (int) (pix / (long) iw);
                int ww = (int) (pix % (long) iw);
                double s = 0;
                for (ulong a = 0; a < oh && win[wo + a] <= hh; a++) {
                    if (hh >= win[wo + oh + a]) continue;
                    for (ulong b = 0; b < ow && win[wo + 2 * oh + b] <= ww; b++) {
                        if (ww >= win[wo + 2 * oh + ow + b]) continue;
                        ulong o = pl * oh * ow + a * ow + b;
                        if (idx[io + o] == pix) s += (double) g[go + o];
                    }
                }
                gx[gxo + i] = (REAL) s;
            }

            DEVICE_FN double pool_divisor(GLOBAL const int* win, ulong wo, ulong oh, ulong ow, ulong a, ulong b,
                    int countPad) {
                if (countPad) return (double) win[wo + 2 * oh + 2 * ow + a] * (double) win[wo + 3 * oh + 2 * ow + b];
                return (double) (win[wo + oh + a] - win[wo + a]) * (double) (win[wo + 2 * oh + ow + b]
                        - win[wo + 2 * oh + b]);
            }

            KERNEL void avg_pool(GLOBAL const REAL* x, ulong xo, GLOBAL REAL* y, ulong yo, GLOBAL const int* win,
                    ulong wo, ulong planes, ulong ih, ulong iw, ulong oh, ulong ow, int countPad) {
                size_t i = GID;
                if (i >= planes * oh * ow) return;
                ulong pl = i / (oh * ow);
                ulong a = (i / ow) % oh;
                ulong b = i % ow;
                ulong base = xo + pl * ih * iw;
                double s = 0;
                for (int hh = win[wo + a]; hh < win[wo + oh + a]; hh++) {
                    for (int ww = win[wo + 2 * oh + b]; ww < win[wo + 2 * oh + ow + b]; ww++) {
                        s += (double) x[base + (ulong) hh * iw + (ulong) ww];
                    }
                }
                y[yo + i] = (REAL) (s / pool_divisor(win, wo, oh, ow, a, b, countPad));
            }

            KERNEL void avg_pool_backward(GLOBAL const REAL* g, ulong go, GLOBAL REAL* gx, ulong gxo,
                    GLOBAL const int* win, ulong wo, ulong planes, ulong ih, ulong iw, ulong oh, ulong ow,
                    int countPad) {
                size_t i = GID;
                if (i >= planes * ih * iw) return;
                ulong pl = i / (ih * iw);
                int hh = (int) ((i % (ih * iw)) / iw);
                int ww = (int) (i % iw);
                double s = 0;
                for (ulong a = 0; a < oh && win[wo + a] <= hh; a++) {
                    if (hh >= win[wo + oh + a]) continue;
                    for (ulong b = 0; b < ow && win[wo + 2 * oh + b] <= ww; b++) {
                        if (ww >= win[wo + 2 * oh + ow + b]) continue;
                        s += (double) g[go + pl * oh * ow + a * ow + b] / pool_divisor(win, wo, oh, ow, a, b, countPad);
                    }
                }
                gx[gxo + i] = (REAL) s;
            }
            """;

    private static final String COMPARE_LONG = """
            KERNEL void sum_rows_int64(GLOBAL const long* x, ulong xo, GLOBAL long* y, ulong yo, ulong cols) {
                LOCAL_MEM ulong part[64];
                size_t row = GID / 64;
                size_t l = LID;
                ulong s = 0;
                for (ulong c = l; c < cols; c += 64) s += (ulong) x[xo + row * cols + c];
                part[l] = s;
                SYNC_LOCAL();
                if (l == 0) {
                    ulong t = 0;
                    for (int i = 0; i < 64; i++) t += part[i];
                    y[yo + row] = (long) t;
                }
            }

            KERNEL void compare_int64(GLOBAL const long* a, ulong ao, GLOBAL const long* b, ulong bo,
                    GLOBAL uchar* out, ulong oo, ulong n, ulong bs, int op) {
                size_t i = GID;
                if (i >= n) return;
                long x = a[ao + i];
                long y = b[bo + i * bs];
                out[oo + i] = (uchar) (op == 0 ? x == y : op == 1 ? x > y : x < y);
            }
            """;

    private static final String COPY = """
            KERNEL void copy_strided_E(GLOBAL const E* src, ulong so, GLOBAL E* dst, ulong dof, ulong n, int rank,
                    ulong s0, ulong s1, ulong s2, ulong s3, ulong s4, ulong s5,
                    long a0, long a1, long a2, long a3, long a4, long a5,
                    long b0, long b1, long b2, long b3, long b4, long b5) {
                size_t i = GID;
                if (i >= n) return;
                ulong sz[6] = {s0, s1, s2, s3, s4, s5};
                long from[6] = {a0, a1, a2, a3, a4, a5};
                long to[6] = {b0, b1, b2, b3, b4, b5};
                ulong rem = i;
                long src_off = 0;
                long dst_off = 0;
                for (int d = rank - 1; d >= 0; d--) {
                    ulong idx = rem % sz[d];
                    rem /= sz[d];
                    src_off += (long) idx * from[d];
                    dst_off += (long) idx * to[d];
                }
                dst[(long) dof + dst_off] = src[(long) so + src_off];
            }

            KERNEL void take_E(GLOBAL const E* src, ulong so, GLOBAL const long* offs, ulong oo, GLOBAL E* dst,
                    ulong dof, ulong n) {
                size_t i = GID;
                if (i < n) dst[dof + i] = src[so + (ulong) offs[oo + i]];
            }

            KERNEL void put_E(GLOBAL E* dst, ulong dof, GLOBAL const long* offs, ulong oo, GLOBAL const E* src,
                    ulong so, GLOBAL const long* from, ulong fo, ulong n) {
                size_t i = GID;
                if (i < n) dst[dof + (ulong) offs[oo + i]] = src[so + (ulong) from[fo + i]];
            }

            """;

    private static final KernelSource FLOAT32 = new KernelSource("tensorbus-tensor-float32",
            Philox.SOURCE + REAL_KERNELS.replace("REAL", "float"));
    private static final KernelSource FLOAT64 = new KernelSource("tensorbus-tensor-float64",
            Philox.SOURCE + REAL_KERNELS.replace("REAL", "double") + COMPARE_LONG);
    private static final KernelSource COPIES = new KernelSource("tensorbus-tensor-copies",
            COPY.replace("_E(", "_1(").replace("E*", "uchar*")
                    + COPY.replace("_E(", "_2(").replace("E*", "ushort*")
                    + COPY.replace("_E(", "_4(").replace("E*", "uint*")
                    + COPY.replace("_E(", "_8(").replace("E*", "ulong*"));

    private DeviceTensorKernels() {
    }

    /**
     * The program of the element-wise, row and comparison kernels for {@code dtype}.
     *
     * @throws IllegalArgumentException for a dtype other than float32 and float64
     */
    public static KernelSource program(DType dtype) {
        return switch (dtype) {
            case FLOAT32 -> FLOAT32;
            case FLOAT64 -> FLOAT64;
            default -> throw new IllegalArgumentException("device tensor kernels compute float32 and float64, not "
                    + dtype);
        };
    }

    /** The program of the strided copies and of {@link #takeName} and {@link #putName}. */
    public static KernelSource copies() {
        return COPIES;
    }

    /**
     * In {@link #copies}, the gather of elements of {@code byteSize} bytes by offset: {@code (src, offs(int64), dst,
     * n)}, {@code dst[i] = src[offs[i]]}, offsets in elements from {@code src}'s first.
     */
    public static String takeName(int byteSize) {
        return "take_" + byteSize;
    }

    /**
     * In {@link #copies}, the scatter of elements of {@code byteSize} bytes to distinct offsets: {@code (dst,
     * offs(int64), src, from(int64), n)}, {@code dst[offs[i]] = src[from[i]]}.
     */
    public static String putName(int byteSize) {
        return "put_" + byteSize;
    }

    /**
     * The strided copy of elements of {@code byteSize} bytes: {@code (src, dst, n, rank, sizes[6],
     * srcStrides[6], dstStrides[6])}, strides in elements, for every index of the shape.
     */
    public static String copyName(int byteSize) {
        return "copy_strided_" + byteSize;
    }
}
