package io.tensorbus.spi.support;

import io.tensorbus.DType;
import io.tensorbus.spi.DeviceRuntime;
import io.tensorbus.spi.ElementwiseOp;
import io.tensorbus.spi.KernelSource;

/**
 * The source of the device kernels every {@link DeviceRuntime} needs, written once and emitted in two dialects:
 * OpenCL C and CUDA C++ (compiled with NVRTC). The kernel bodies use a few macros ({@code KERNEL}, {@code GLOBAL},
 * {@code GID}, {@code LOAD_HALF}, ...) that each dialect's prelude defines, so both runtimes run the same
 * arithmetic and match the host bit for bit.
 *
 * <p>The collectives' kernels ({@code reduce_T}, {@code divide_T}) reproduce {@link HostReductions}: MAX and MIN
 * propagate NaN and order -0 below +0 as {@link Math#max(float, float)} does, integers wrap, bools combine as
 * 0/1, half-precision types combine in float32 and round to nearest even. The tensors' kernels (element-wise
 * arithmetic, casts between every pair of dtypes, whole-tensor sums, 8-byte fills) mirror the host's
 * conversions: floats to integers truncate and saturate at the 64-bit range, NaN becomes 0, narrowing floats
 * round to nearest even, bfloat16 keeps a NaN's payload. Casts and sums go through float64, so the tensors'
 * kernels need double precision. Operands are addressed by element offsets, so a chunk of a buffer needs no
 * sub-buffer.
 */
public final class DeviceKernels {
    /** The threads of the one block (work-group) that sums a tensor. */
    public static final int SUM_ITEMS = 256;

    /** The language a runtime compiles. */
    public enum Dialect {
        /** OpenCL C 1.2, with {@code cl_khr_fp64} where double precision is needed. */
        OPENCL,
        /** CUDA C++ as NVRTC compiles it; halves are stored as {@code ushort} and converted in software. */
        CUDA
    }

    private static final String OPENCL_PRELUDE = """
            #pragma OPENCL FP_CONTRACT OFF
            #define KERNEL __kernel
            #define GLOBAL __global
            #define DEVICE_FN inline
            #define GID get_global_id(0)
            #define LID get_local_id(0)
            #define LOCAL_MEM __local
            #define SYNC_LOCAL() barrier(CLK_LOCAL_MEM_FENCE)
            #define HALF_T half
            #define LOAD_HALF(p, i) vload_half(i, p)
            #define STORE_HALF(v, p, i) vstore_half_rte(v, i, p)

            """;

    /**
     * CUDA's side of the macros. The conversions are written out where CUDA's differ from OpenCL's (saturating
     * float-to-integer casts) or need a header NVRTC does not ship (halves: {@code float_to_half_rte} is
     * {@link Float#floatToFloat16} and {@code half_to_float} {@link Float#float16ToFloat}, NaN payloads included).
     */
    private static final String CUDA_PRELUDE = """
            typedef unsigned char uchar;
            typedef unsigned short ushort;
            typedef unsigned int uint;
            typedef unsigned long ulong;
            #define KERNEL extern "C" __global__
            #define GLOBAL
            #define DEVICE_FN __device__ inline
            #define GID ((size_t) blockIdx.x * blockDim.x + threadIdx.x)
            #define LID threadIdx.x
            #define LOCAL_MEM __shared__
            #define SYNC_LOCAL() __syncthreads()
            #define HALF_T ushort
            #define LOAD_HALF(p, i) half_to_float((p)[i])
            #define STORE_HALF(v, p, i) ((p)[i] = float_to_half_rte(v))

            DEVICE_FN float as_float(uint b) { return __uint_as_float(b); }
            DEVICE_FN uint as_uint(float f) { return __float_as_uint(f); }
            DEVICE_FN float convert_float_rte(double v) { return __double2float_rn(v); }
            DEVICE_FN float convert_float_rte(long v) { return __ll2float_rn(v); }
            DEVICE_FN double convert_double_rte(long v) { return __ll2double_rn(v); }

            DEVICE_FN long convert_long_sat_rtz(double v) {
                if (isnan(v)) return 0L;
                if (v >= 9223372036854775808.0) return 0x7fffffffffffffffL;
                if (v <= -9223372036854775808.0) return -0x7fffffffffffffffL - 1L;
                return (long) v;
            }

            DEVICE_FN float half_to_float(ushort h) {
                uint sign = ((uint) h & 0x8000u) << 16;
                uint e = ((uint) h >> 10) & 0x1fu;
                uint m = (uint) h & 0x3ffu;
                if (e == 0u) {
                    float v = 5.9604644775390625e-8f * (float) m;
                    return sign != 0u ? -v : v;
                }
                if (e == 31u) return as_float(sign | 0x7f800000u | (m << 13));
                return as_float(sign | ((e + 112u) << 23) | (m << 13));
            }

            DEVICE_FN ushort float_to_half_rte(float f) {
                uint bits = as_uint(f);
                uint sign = (bits >> 16) & 0x8000u;
                if (isnan(f)) {
                    return (ushort) (sign | 0x7c00u | ((bits & 0x007fe000u) >> 13) | ((bits & 0x00001ff0u) >> 4)
                            | (bits & 0x0000000fu));
                }
                float a = fabsf(f);
                if (a >= 65520.0f) return (ushort) (sign | 0x7c00u);
                if (a <= 2.98023223876953125e-8f) return (ushort) sign;
                int exp = (int) ((bits >> 23) & 0xffu) - 127;
                int delta = 0;
                uint msb = 0u;
                if (exp < -14) {
                    delta = -14 - exp;
                    exp = -15;
                    msb = 0x00800000u;
                }
                uint signif = (bits & 0x007fffffu) | msb;
                uint r = signif >> (13 + delta);
                uint lsb = signif & (1u << (13 + delta));
                uint round = signif & (1u << (12 + delta));
                uint sticky = signif & ((1u << (12 + delta)) - 1u);
                if (round != 0u && (lsb | sticky) != 0u) r++;
                return (ushort) (sign | ((uint) ((exp + 15) << 10) + r));
            }

            """;

    private static final String FP64_PRAGMA = "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n";

    private static final String COMBINE = """
            #define OP_SUM 0
            #define OP_PRODUCT 1
            #define OP_MAX 2
            #define OP_MIN 3
            #define OP_AVG 4
            #define OP_BAND 5
            #define OP_BOR 6
            #define OP_BXOR 7

            DEVICE_FN float fcombine(float a, float b, int op) {
                switch (op) {
                    case OP_PRODUCT: return a * b;
                    case OP_MAX: return isnan(a) ? a : isnan(b) ? b : a == b ? (signbit(a) ? b : a) : (a > b ? a : b);
                    case OP_MIN: return isnan(a) ? a : isnan(b) ? b : a == b ? (signbit(a) ? a : b) : (a < b ? a : b);
                    default: return a + b;
                }
            }

            DEVICE_FN ulong icombine(ulong a, ulong b, int op, int wide) {
                long sa = wide ? (long) a : (long) (int) a;
                long sb = wide ? (long) b : (long) (int) b;
                switch (op) {
                    case OP_PRODUCT: return a * b;
                    case OP_MAX: return sa > sb ? a : b;
                    case OP_MIN: return sa < sb ? a : b;
                    case OP_BAND: return a & b;
                    case OP_BOR: return a | b;
                    case OP_BXOR: return a ^ b;
                    default: return a + b;
                }
            }

            DEVICE_FN float bf16_to_float(ushort b) {
                return as_float(((uint) b) << 16);
            }

            """;

    private static final String COLLECTIVES = """
            DEVICE_FN ushort reduce_float_to_bf16(float f) {
                if (isnan(f)) {
                    return (ushort) 0x7fc0;
                }
                uint bits = as_uint(f);
                return (ushort) ((bits + 0x7fff + ((bits >> 16) & 1)) >> 16);
            }

            KERNEL void reduce_float32(GLOBAL float* acc, ulong ao,
                    GLOBAL const float* src, ulong so, ulong n, int op) {
                size_t i = GID;
                if (i < n) acc[ao + i] = fcombine(acc[ao + i], src[so + i], op);
            }

            KERNEL void reduce_float16(GLOBAL HALF_T* acc, ulong ao,
                    GLOBAL const HALF_T* src, ulong so, ulong n, int op) {
                size_t i = GID;
                if (i < n) STORE_HALF(fcombine(LOAD_HALF(acc, ao + i), LOAD_HALF(src, so + i), op), acc, ao + i);
            }

            KERNEL void reduce_bfloat16(GLOBAL ushort* acc, ulong ao,
                    GLOBAL const ushort* src, ulong so, ulong n, int op) {
                size_t i = GID;
                if (i < n) acc[ao + i] = reduce_float_to_bf16(
                        fcombine(bf16_to_float(acc[ao + i]), bf16_to_float(src[so + i]), op));
            }

            KERNEL void reduce_int32(GLOBAL int* acc, ulong ao, GLOBAL const int* src, ulong so, ulong n, int op) {
                size_t i = GID;
                if (i < n) acc[ao + i] = (int) icombine((ulong) (uint) acc[ao + i], (ulong) (uint) src[so + i], op, 0);
            }

            KERNEL void reduce_int64(GLOBAL long* acc, ulong ao, GLOBAL const long* src, ulong so, ulong n, int op) {
                size_t i = GID;
                if (i < n) acc[ao + i] = (long) icombine((ulong) acc[ao + i], (ulong) src[so + i], op, 1);
            }

            KERNEL void reduce_bool(GLOBAL uchar* acc, ulong ao, GLOBAL const uchar* src, ulong so, ulong n, int op) {
                size_t i = GID;
                if (i >= n) return;
                uchar a = acc[ao + i] != 0;
                uchar b = src[so + i] != 0;
                uchar r;
                switch (op) {
                    case OP_SUM: case OP_MAX: case OP_BOR: r = a | b; break;
                    case OP_BXOR: r = a ^ b; break;
                    default: r = a & b; break;
                }
                acc[ao + i] = r;
            }

            KERNEL void divide_float32(GLOBAL float* acc, ulong ao, ulong n, int d) {
                size_t i = GID;
                if (i < n) acc[ao + i] = acc[ao + i] / (float) d;
            }

            KERNEL void divide_float16(GLOBAL HALF_T* acc, ulong ao, ulong n, int d) {
                size_t i = GID;
                if (i < n) STORE_HALF(LOAD_HALF(acc, ao + i) / (float) d, acc, ao + i);
            }

            KERNEL void divide_bfloat16(GLOBAL ushort* acc, ulong ao, ulong n, int d) {
                size_t i = GID;
                if (i < n) acc[ao + i] = reduce_float_to_bf16(bf16_to_float(acc[ao + i]) / (float) d);
            }

            """;

    private static final String COLLECTIVES_FP64 = """
            DEVICE_FN double dcombine(double a, double b, int op) {
                switch (op) {
                    case OP_PRODUCT: return a * b;
                    case OP_MAX: return isnan(a) ? a : isnan(b) ? b : a == b ? (signbit(a) ? b : a) : (a > b ? a : b);
                    case OP_MIN: return isnan(a) ? a : isnan(b) ? b : a == b ? (signbit(a) ? a : b) : (a < b ? a : b);
                    default: return a + b;
                }
            }

            KERNEL void reduce_float64(GLOBAL double* acc, ulong ao,
                    GLOBAL const double* src, ulong so, ulong n, int op) {
                size_t i = GID;
                if (i < n) acc[ao + i] = dcombine(acc[ao + i], src[so + i], op);
            }

            KERNEL void divide_float64(GLOBAL double* acc, ulong ao, ulong n, int d) {
                size_t i = GID;
                if (i < n) acc[ao + i] = acc[ao + i] / (double) d;
            }

            """;

    private static final String TENSOR_HELPERS = """
            DEVICE_FN ushort float_to_bf16(float f) {
                uint bits = as_uint(f);
                if (isnan(f)) {
                    return (ushort) ((bits >> 16) | 0x40);
                }
                return (ushort) ((bits + 0x7fff + ((bits >> 16) & 1)) >> 16);
            }

            KERNEL void fill_8(GLOBAL ulong* p, ulong off, ulong n, ulong v) {
                size_t i = GID;
                if (i < n) p[off + i] = v;
            }

            """;

    /**
     * The GEMM of runtimes without a BLAS: one work item per element of {@code C}, summing in the element type in
     * the order of {@code k}. {@code beta == 0} never reads {@code C}, as BLAS does not.
     */
    private static final String GEMM = """
            KERNEL void gemm_REAL(GLOBAL const REAL* a, ulong ao, GLOBAL const REAL* b, ulong bo, GLOBAL REAL* c,
                    ulong co, ulong m, ulong n, ulong k, ulong lda, ulong ldb, ulong ldc, ulong sa, ulong sb,
                    ulong sc, int ta, int tb, ulong items, double alpha, double beta) {
                size_t g = GID;
                if (g >= items) return;
                ulong bi = g / (m * n);
                ulong r = g % (m * n);
                ulong i = r / n;
                ulong j = r % n;
                ulong ab = ao + bi * sa;
                ulong bb = bo + bi * sb;
                REAL acc = 0;
                for (ulong p = 0; p < k; p++) {
                    REAL x = ta ? a[ab + p * lda + i] : a[ab + i * lda + p];
                    REAL y = tb ? b[bb + j * ldb + p] : b[bb + p * ldb + j];
                    acc += x * y;
                }
                ulong ci = co + bi * sc + i * ldc + j;
                REAL v = (REAL) alpha * acc;
                c[ci] = beta == 0.0 ? v : v + (REAL) beta * c[ci];
            }

            """;

    private DeviceKernels() {
    }

    /**
     * {@code program} as {@code dialect} compiles it: the dialect's prelude (double precision enabled), then the
     * program's kernels.
     */
    public static String program(Dialect dialect, KernelSource program) {
        return prelude(dialect, true) + program.source();
    }

    /**
     * The collectives' program: {@code reduce_T} and {@code divide_T} for every dtype, the float64 ones only when
     * {@code fp64} (an OpenCL device without {@code cl_khr_fp64} builds the rest).
     */
    public static String collectives(Dialect dialect, boolean fp64) {
        StringBuilder s = new StringBuilder(prelude(dialect, fp64)).append(COMBINE).append(COLLECTIVES);
        if (fp64) {
            s.append(COLLECTIVES_FP64);
        }
        return s.toString();
    }

    /**
     * The tensors' program: element-wise arithmetic, casts, sums, {@code fill_8} and the GEMM; needs double
     * precision.
     */
    public static String tensors(Dialect dialect) {
        StringBuilder s = new StringBuilder(prelude(dialect, true)).append(COMBINE).append(TENSOR_HELPERS);
        for (DType d : DType.values()) {
            if (d != DType.BOOL) {
                s.append(elementwise(d));
            }
            s.append(sum(d));
            for (DType to : DType.values()) {
                s.append(cast(d, to));
            }
        }
        s.append(gemm(DType.FLOAT32)).append(gemm(DType.FLOAT64));
        return s.toString();
    }

    /** The kernel that reduces {@code dtype}: {@code (acc, accOffset, src, srcOffset, n, op)}, offsets in elements. */
    public static String reduceName(DType dtype) {
        return "reduce_" + dtype;
    }

    /**
     * The GEMM kernel of {@code dtype} (float32 or float64): {@code (a, ao, b, bo, c, co, m, n, k, lda, ldb, ldc,
     * strideA, strideB, strideC, transA, transB, items, alpha, beta)}, over {@code items = batch * m * n}.
     */
    public static String gemmName(DType dtype) {
        return "gemm_" + dtype;
    }

    /** The kernel that divides {@code dtype}: {@code (acc, offset, n, divisor)}. */
    public static String divideName(DType dtype) {
        return "divide_" + dtype;
    }

    /**
     * The element-wise kernel of {@code dtype}: {@code (a, ao, b, bo, out, oo, n, bStride, op, scalar, useScalar)},
     * {@code op} an {@link ElementwiseOp} ordinal, {@code bStride} 0 for a one-element {@code b}.
     */
    public static String elementwiseName(DType dtype) {
        return "ew_" + dtype;
    }

    /** The kernel that converts {@code from} into {@code to}: {@code (src, srcOffset, dst, dstOffset, n)}. */
    public static String castName(DType from, DType to) {
        return "cast_" + from + "_" + to;
    }

    /** The kernel that sums {@code dtype} in one block of {@link #SUM_ITEMS}: {@code (src, so, out, oo, n)}. */
    public static String sumName(DType dtype) {
        return "sum_" + dtype;
    }

    /** The kernel that fills 8-byte elements with one bit pattern: {@code (p, offset, n, bits)}. */
    public static String fill8Name() {
        return "fill_8";
    }

    /** The dtype a sum of {@code d} is written in: itself for floats, int64 for integers and bools. */
    public static DType sumType(DType d) {
        return d.isFloatingPoint() ? d : DType.INT64;
    }

    private static String prelude(Dialect dialect, boolean fp64) {
        return switch (dialect) {
            case OPENCL -> (fp64 ? FP64_PRAGMA : "") + OPENCL_PRELUDE;
            case CUDA -> CUDA_PRELUDE;
        };
    }

    private static String gemm(DType d) {
        return GEMM.replace("gemm_REAL", gemmName(d)).replace("REAL", storage(d));
    }

    /** The device type that stores {@code d}. */
    private static String storage(DType d) {
        return switch (d) {
            case FLOAT32 -> "float";
            case FLOAT64 -> "double";
            case FLOAT16 -> "HALF_T";
            case BFLOAT16 -> "ushort";
            case INT32 -> "int";
            case INT64 -> "long";
            case BOOL -> "uchar";
        };
    }

    /** Element {@code i} of {@code p} as a double (exact for every dtype but int64 beyond 2^53). */
    private static String loadDouble(DType d, String p, String i) {
        return switch (d) {
            case FLOAT16 -> "(double) LOAD_HALF(" + p + ", " + i + ")";
            case BFLOAT16 -> "(double) bf16_to_float(" + p + "[" + i + "])";
            case BOOL -> "(" + p + "[" + i + "] != 0 ? 1.0 : 0.0)";
            default -> "(double) " + p + "[" + i + "]";
        };
    }

    /** Element {@code i} of an integer or bool {@code p} as a long. */
    private static String loadLong(DType d, String p, String i) {
        return d == DType.BOOL ? "(" + p + "[" + i + "] != 0 ? 1L : 0L)" : "(long) " + p + "[" + i + "]";
    }

    /** Stores double {@code v} into element {@code i} of {@code p}, as the host's {@code setDouble}. */
    private static String storeDouble(DType d, String p, String i, String v) {
        return switch (d) {
            case FLOAT32 -> p + "[" + i + "] = convert_float_rte(" + v + ");";
            case FLOAT64 -> p + "[" + i + "] = " + v + ";";
            case FLOAT16 -> "STORE_HALF(convert_float_rte(" + v + "), " + p + ", " + i + ");";
            case BFLOAT16 -> p + "[" + i + "] = float_to_bf16(convert_float_rte(" + v + "));";
            case INT32 -> p + "[" + i + "] = (int) convert_long_sat_rtz(" + v + ");";
            case INT64 -> p + "[" + i + "] = convert_long_sat_rtz(" + v + ");";
            case BOOL -> p + "[" + i + "] = (" + v + ") != 0.0 ? 1 : 0;";
        };
    }

    /** Stores long {@code v} into element {@code i} of {@code p}, as the host's {@code setLong}. */
    private static String storeLong(DType d, String p, String i, String v) {
        return switch (d) {
            case INT32 -> p + "[" + i + "] = (int) (" + v + ");";
            case INT64 -> p + "[" + i + "] = " + v + ";";
            case BOOL -> p + "[" + i + "] = (" + v + ") != 0 ? 1 : 0;";
            case FLOAT32 -> p + "[" + i + "] = convert_float_rte(" + v + ");";
            default -> storeDouble(d, p, i, "convert_double_rte(" + v + ")");
        };
    }

    private static String elementwise(DType d) {
        String t = storage(d);
        String body;
        if (d.isFloatingPoint()) {
            // float32 and the half types compute in float (exact for halves, as the host's double then float);
            // float64 in double.
            String ct = d == DType.FLOAT64 ? "double" : "float";
            String a = "(" + ct + ") " + loadDouble(d, "a", "ao + i");
            String b = "scalar ? (" + ct + ") sv : (" + ct + ") " + loadDouble(d, "b", "bo + i * bs");
            body = ct + " x = " + a + ";\n        " + ct + " y = " + b + ";\n        " + ct
                    + " r = op == 0 ? x + y : op == 1 ? x - y : op == 2 ? x * y : x / y;\n        "
                    + storeDouble(d, "out", "oo + i", "(double) r");
        } else {
            // Integers wrap, as Java's: unsigned arithmetic has no undefined overflow.
            body = "ulong x = (ulong) a[ao + i];\n        ulong y = scalar ? (ulong) convert_long_sat_rtz(sv) : "
                    + "(ulong) b[bo + i * bs];\n        "
                    + "ulong r = op == 0 ? x + y : op == 1 ? x - y : x * y;\n        out[oo + i] = (" + t + ") r;";
        }
        return "KERNEL void " + elementwiseName(d) + "(GLOBAL const " + t + "* a, ulong ao, GLOBAL const " + t
                + "* b, ulong bo, GLOBAL " + t
                + "* out, ulong oo, ulong n, ulong bs, int op, double sv, int scalar) {\n"
                + "    size_t i = GID;\n    if (i < n) {\n        " + body + "\n    }\n}\n\n";
    }

    private static String cast(DType from, DType to) {
        String body = from.isFloatingPoint() ? storeDouble(to, "dst", "dof + i", loadDouble(from, "src", "sof + i"))
                : storeLong(to, "dst", "dof + i", loadLong(from, "src", "sof + i"));
        return "KERNEL void " + castName(from, to) + "(GLOBAL const " + storage(from) + "* src, ulong sof, GLOBAL "
                + storage(to) + "* dst, ulong dof, ulong n) {\n    size_t i = GID;\n    if (i < n) {\n        "
                + body + "\n    }\n}\n\n";
    }

    private static String sum(DType d) {
        boolean fp = d.isFloatingPoint();
        String acc = fp ? "double" : "long";
        String load = fp ? loadDouble(d, "src", "sof + k") : loadLong(d, "src", "sof + k");
        DType outType = sumType(d);
        String store = fp ? storeDouble(outType, "out", "oof", "part[0]") : storeLong(outType, "out", "oof", "part[0]");
        return "KERNEL void " + sumName(d) + "(GLOBAL const " + storage(d) + "* src, ulong sof, GLOBAL "
                + storage(outType) + "* out, ulong oof, ulong n) {\n"
                + "    LOCAL_MEM " + acc + " part[" + SUM_ITEMS + "];\n"
                + "    size_t i = LID;\n"
                + "    " + acc + " s = 0;\n"
                + "    for (ulong k = i; k < n; k += " + SUM_ITEMS + ") {\n        s += " + load + ";\n    }\n"
                + "    part[i] = s;\n"
                + "    SYNC_LOCAL();\n"
                + "    for (uint w = " + SUM_ITEMS / 2 + "; w > 0; w >>= 1) {\n"
                + "        if (i < w) {\n            part[i] += part[i + w];\n        }\n"
                + "        SYNC_LOCAL();\n    }\n"
                + "    if (i == 0) {\n        " + store + "\n    }\n}\n\n";
    }
}
