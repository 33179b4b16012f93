package io.tensorbus.backend.opencl;

import io.tensorbus.DType;

/**
 * The OpenCL C source of the collectives' element-wise kernels, one {@code reduce_T} and one {@code divide_T} per
 * dtype. They reproduce {@code HostReductions} bit for bit: MAX and MIN propagate NaN and order -0 below +0 as
 * {@link Math#max(float, float)} does (OpenCL's {@code fmax} would drop the NaN), integers wrap, bools combine
 * as 0/1, and half-precision types are combined in float32 and rounded to nearest even. Operands are addressed
 * by element offsets so that a chunk of a buffer needs no sub-buffer (whose origin must be aligned).
 */
final class OpenClKernels {
    /** The op codes the kernels take: {@code ReduceOp.ordinal()}. */
    static final String COMMON = """
            #pragma OPENCL FP_CONTRACT OFF
            #define SUM 0
            #define PRODUCT 1
            #define MAX 2
            #define MIN 3
            #define AVG 4
            #define BAND 5
            #define BOR 6
            #define BXOR 7

            inline float fcombine(float a, float b, int op) {
                switch (op) {
                    case PRODUCT: return a * b;
                    case MAX: return isnan(a) ? a : isnan(b) ? b : a == b ? (signbit(a) ? b : a) : (a > b ? a : b);
                    case MIN: return isnan(a) ? a : isnan(b) ? b : a == b ? (signbit(a) ? a : b) : (a < b ? a : b);
                    default: return a + b;
                }
            }

            inline ulong icombine(ulong a, ulong b, int op, int is_signed32, int is_signed64) {
                switch (op) {
                    case PRODUCT: return a * b;
                    case MAX: return is_signed64 ? (ulong) max((long) a, (long) b) : (ulong) max((int) a, (int) b);
                    case MIN: return is_signed64 ? (ulong) min((long) a, (long) b) : (ulong) min((int) a, (int) b);
                    case BAND: return a & b;
                    case BOR: return a | b;
                    case BXOR: return a ^ b;
                    default: return a + b;
                }
            }

            inline float bf16_to_float(ushort b) {
                return as_float(((uint) b) << 16);
            }

            inline ushort float_to_bf16(float f) {
                if (isnan(f)) {
                    return (ushort) 0x7fc0;
                }
                uint bits = as_uint(f);
                return (ushort) ((bits + 0x7fff + ((bits >> 16) & 1)) >> 16);
            }

            __kernel void reduce_float32(__global float* acc, ulong ao, __global const float* src, ulong so, ulong n, int op) {
                size_t i = get_global_id(0);
                if (i < n) acc[ao + i] = fcombine(acc[ao + i], src[so + i], op);
            }

            __kernel void reduce_float16(__global half* acc, ulong ao, __global const half* src, ulong so, ulong n, int op) {
                size_t i = get_global_id(0);
                if (i < n) vstore_half_rte(fcombine(vload_half(ao + i, acc), vload_half(so + i, src), op), ao + i, acc);
            }

            __kernel void reduce_bfloat16(__global ushort* acc, ulong ao, __global const ushort* src, ulong so, ulong n, int op) {
                size_t i = get_global_id(0);
                if (i < n) acc[ao + i] = float_to_bf16(fcombine(bf16_to_float(acc[ao + i]), bf16_to_float(src[so + i]), op));
            }

            __kernel void reduce_int32(__global int* acc, ulong ao, __global const int* src, ulong so, ulong n, int op) {
                size_t i = get_global_id(0);
                if (i < n) acc[ao + i] = (int) icombine((ulong) (uint) acc[ao + i], (ulong) (uint) src[so + i], op, 1, 0);
            }

            __kernel void reduce_int64(__global long* acc, ulong ao, __global const long* src, ulong so, ulong n, int op) {
                size_t i = get_global_id(0);
                if (i < n) acc[ao + i] = (long) icombine((ulong) acc[ao + i], (ulong) src[so + i], op, 0, 1);
            }

            __kernel void reduce_bool(__global uchar* acc, ulong ao, __global const uchar* src, ulong so, ulong n, int op) {
                size_t i = get_global_id(0);
                if (i >= n) return;
                uchar a = acc[ao + i] != 0;
                uchar b = src[so + i] != 0;
                uchar r;
                switch (op) {
                    case SUM: case MAX: case BOR: r = a | b; break;
                    case BXOR: r = a ^ b; break;
                    default: r = a & b; break;
                }
                acc[ao + i] = r;
            }

            __kernel void divide_float32(__global float* acc, ulong ao, ulong n, int d) {
                size_t i = get_global_id(0);
                if (i < n) acc[ao + i] = acc[ao + i] / (float) d;
            }

            __kernel void divide_float16(__global half* acc, ulong ao, ulong n, int d) {
                size_t i = get_global_id(0);
                if (i < n) vstore_half_rte(vload_half(ao + i, acc) / (float) d, ao + i, acc);
            }

            __kernel void divide_bfloat16(__global ushort* acc, ulong ao, ulong n, int d) {
                size_t i = get_global_id(0);
                if (i < n) acc[ao + i] = float_to_bf16(bf16_to_float(acc[ao + i]) / (float) d);
            }
            """;

    /** The float64 kernels, built only on devices with {@code cl_khr_fp64}. */
    static final String FP64 = """
            #pragma OPENCL EXTENSION cl_khr_fp64 : enable

            inline double dcombine(double a, double b, int op) {
                switch (op) {
                    case PRODUCT: return a * b;
                    case MAX: return isnan(a) ? a : isnan(b) ? b : a == b ? (signbit(a) ? b : a) : (a > b ? a : b);
                    case MIN: return isnan(a) ? a : isnan(b) ? b : a == b ? (signbit(a) ? a : b) : (a < b ? a : b);
                    default: return a + b;
                }
            }

            __kernel void reduce_float64(__global double* acc, ulong ao, __global const double* src, ulong so, ulong n, int op) {
                size_t i = get_global_id(0);
                if (i < n) acc[ao + i] = dcombine(acc[ao + i], src[so + i], op);
            }

            __kernel void divide_float64(__global double* acc, ulong ao, ulong n, int d) {
                size_t i = get_global_id(0);
                if (i < n) acc[ao + i] = acc[ao + i] / (double) d;
            }
            """;

    /**
     * The build option for IEEE float32 division, which OpenCL otherwise allows to be 2.5 ulp off (AVG must match
     * the host's correctly rounded quotient); only passed to devices that report support for it.
     */
    static final String CORRECT_DIVISION = "-cl-fp32-correctly-rounded-divide-sqrt";

    private OpenClKernels() {
    }

    /** The name of the kernel that reduces {@code dtype}. */
    static String reduce(DType dtype) {
        return "reduce_" + dtype;
    }

    /** The name of the kernel that divides {@code dtype}. */
    static String divide(DType dtype) {
        return "divide_" + dtype;
    }
}
