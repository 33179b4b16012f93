package io.tensorbus.backend.opencl;

import io.tensorbus.DType;

/**
 * The OpenCL C source of the tensor kernels: element-wise arithmetic, casts between every pair of dtypes and
 * whole-tensor sums, generated per dtype from small load/store templates that mirror the host's conversions
 * ({@code Access} in tensorbus-core): floats to integers truncate and saturate at the 64-bit range, NaN becomes
 * 0, narrowing floats round to nearest even, bfloat16 keeps a NaN's payload. Casts and sums go through float64,
 * so these kernels need {@code cl_khr_fp64}.
 */
final class TensorKernels {
    /** Work items of the one work-group that sums a tensor. */
    static final int SUM_ITEMS = 256;

    private TensorKernels() {
    }

    /** The complete program. */
    static String source() {
        StringBuilder s = new StringBuilder("""
                #pragma OPENCL EXTENSION cl_khr_fp64 : enable
                #pragma OPENCL FP_CONTRACT OFF

                inline float bf16_to_float(ushort b) {
                    return as_float(((uint) b) << 16);
                }

                inline ushort float_to_bf16(float f) {
                    uint bits = as_uint(f);
                    if (isnan(f)) {
                        return (ushort) ((bits >> 16) | 0x40);
                    }
                    return (ushort) ((bits + 0x7fff + ((bits >> 16) & 1)) >> 16);
                }

                """);
        for (DType d : DType.values()) {
            if (d != DType.BOOL) {
                s.append(elementwise(d));
            }
            s.append(sum(d));
            for (DType to : DType.values()) {
                s.append(cast(d, to));
            }
        }
        return s.toString();
    }

    static String elementwiseName(DType d) {
        return "ew_" + d;
    }

    static String castName(DType from, DType to) {
        return "cast_" + from + "_" + to;
    }

    static String sumName(DType d) {
        return "sum_" + d;
    }

    /** The dtype a sum of {@code d} is written in: itself for floats, int64 for integers and bools. */
    static DType sumType(DType d) {
        return d.isFloatingPoint() ? d : DType.INT64;
    }

    /** The OpenCL type that stores {@code d}. */
    private static String storage(DType d) {
        return switch (d) {
            case FLOAT32 -> "float";
            case FLOAT64 -> "double";
            case FLOAT16 -> "half";
            case BFLOAT16 -> "ushort";
            case INT32 -> "int";
            case INT64 -> "long";
            case BOOL -> "uchar";
        };
    }

    /** Element {@code i} of {@code p} as a double (exact for every dtype but int64 beyond 2^53). */
    private static String loadDouble(DType d, String p, String i) {
        return switch (d) {
            case FLOAT16 -> "(double) vload_half(" + i + ", " + p + ")";
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
            case FLOAT16 -> "vstore_half_rte(convert_float_rte(" + v + "), " + i + ", " + p + ");";
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
            // Integers wrap, as Java's: unsigned arithmetic in OpenCL C has no undefined overflow.
            body = "ulong x = (ulong) a[ao + i];\n        ulong y = scalar ? (ulong) convert_long_sat_rtz(sv) : (ulong) b[bo + i * bs];\n        "
                    + "ulong r = op == 0 ? x + y : op == 1 ? x - y : x * y;\n        out[oo + i] = (" + t + ") r;";
        }
        return "__kernel void " + elementwiseName(d) + "(__global const " + t + "* a, ulong ao, __global const " + t
                + "* b, ulong bo, __global " + t + "* out, ulong oo, ulong n, ulong bs, int op, double sv, int scalar) {\n    size_t i = get_global_id(0);\n"
                + "    if (i < n) {\n        " + body + "\n    }\n}\n\n";
    }

    private static String cast(DType from, DType to) {
        String body = from.isFloatingPoint() ? storeDouble(to, "dst", "dof + i", loadDouble(from, "src", "sof + i"))
                : storeLong(to, "dst", "dof + i", loadLong(from, "src", "sof + i"));
        return "__kernel void " + castName(from, to) + "(__global const " + storage(from) + "* src, ulong sof, __global "
                + storage(to) + "* dst, ulong dof, ulong n) {\n    size_t i = get_global_id(0);\n    if (i < n) {\n        "
                + body + "\n    }\n}\n\n";
    }

    private static String sum(DType d) {
        boolean fp = d.isFloatingPoint();
        String acc = fp ? "double" : "long";
        String load = fp ? loadDouble(d, "src", "sof + k") : loadLong(d, "src", "sof + k");
        DType outType = sumType(d);
        String store = fp ? storeDouble(outType, "out", "oof", "part[0]") : storeLong(outType, "out", "oof", "part[0]");
        return "__kernel void " + sumName(d) + "(__global const " + storage(d) + "* src, ulong sof, __global "
                + storage(outType) + "* out, ulong oof, ulong n) {\n"
                + "    __local " + acc + " part[" + SUM_ITEMS + "];\n"
                + "    size_t i = get_local_id(0);\n"
                + "    " + acc + " s = 0;\n"
                + "    for (ulong k = i; k < n; k += " + SUM_ITEMS + ") {\n        s += " + load + ";\n    }\n"
                + "    part[i] = s;\n"
                + "    barrier(CLK_LOCAL_MEM_FENCE);\n"
                + "    for (uint w = " + SUM_ITEMS / 2 + "; w > 0; w >>= 1) {\n"
                + "        if (i < w) {\n            part[i] += part[i + w];\n        }\n"
                + "        barrier(CLK_LOCAL_MEM_FENCE);\n    }\n"
                + "    if (i == 0) {\n        " + store + "\n    }\n}\n\n";
    }
}
