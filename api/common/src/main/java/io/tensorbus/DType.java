package io.tensorbus;

import java.util.Locale;

/**
 * The element type of a tensor or a device buffer, with PyTorch's names.
 *
 * <p>float16 and bfloat16 are storage types (for gradient compression and interchange): tensors of these
 * types can be created, copied, converted and sent, while arithmetic runs in float32 or float64.
 */
public enum DType {
    /** 32-bit IEEE float, PyTorch's {@code torch.float32}. */
    FLOAT32("float32", 4, true, "<f4", "F32"),
    /** 64-bit IEEE float, PyTorch's {@code torch.float64}. */
    FLOAT64("float64", 8, true, "<f8", "F64"),
    /** 16-bit IEEE half float (storage only). */
    FLOAT16("float16", 2, true, "<f2", "F16"),
    /** bfloat16, the upper half of a float32 (storage only). */
    BFLOAT16("bfloat16", 2, true, null, "BF16"),
    /** 32-bit signed integer. */
    INT32("int32", 4, false, "<i4", "I32"),
    /** 64-bit signed integer, PyTorch's default integer type. */
    INT64("int64", 8, false, "<i8", "I64"),
    /** Boolean stored as one byte per element (0 or 1). */
    BOOL("bool", 1, false, "|b1", "BOOL");

    private final String torchName;
    private final int byteSize;
    private final boolean floatingPoint;
    private final String numpyDescr;
    private final String safetensorsName;

    DType(String torchName, int byteSize, boolean floatingPoint, String numpyDescr, String safetensorsName) {
        this.torchName = torchName;
        this.byteSize = byteSize;
        this.floatingPoint = floatingPoint;
        this.numpyDescr = numpyDescr;
        this.safetensorsName = safetensorsName;
    }

    /** PyTorch's name without the {@code torch.} prefix, such as {@code float32}. */
    public String torchName() {
        return torchName;
    }

    /** Bytes per element. */
    public int byteSize() {
        return byteSize;
    }

    /** True for float16, bfloat16, float32 and float64. */
    public boolean isFloatingPoint() {
        return floatingPoint;
    }

    /** True where arithmetic kernels exist for this type; float16 and bfloat16 are storage only. */
    public boolean isComputeType() {
        return this != FLOAT16 && this != BFLOAT16;
    }

    /**
     * The NumPy {@code descr} string (little-endian) used by {@code .npy} headers.
     *
     * @return the descr, or {@code null} for bfloat16, which NumPy has no type for
     */
    public String numpyDescr() {
        return numpyDescr;
    }

    /** The dtype name used in safetensors headers, such as {@code F32}. */
    public String safetensorsName() {
        return safetensorsName;
    }

    /**
     * Finds a dtype by PyTorch name ({@code float32}, {@code float}, {@code long}, {@code half}...).
     *
     * @throws IllegalArgumentException naming the allowed names when {@code name} is none of them
     */
    public static DType of(String name) {
        String n = name.toLowerCase(Locale.ROOT);
        switch (n) {
            case "float", "float32", "f32" -> { return FLOAT32; }
            case "double", "float64", "f64" -> { return FLOAT64; }
            case "half", "float16", "f16" -> { return FLOAT16; }
            case "bfloat16", "bf16" -> { return BFLOAT16; }
            case "int", "int32", "i32" -> { return INT32; }
            case "long", "int64", "i64" -> { return INT64; }
            case "bool" -> { return BOOL; }
            default -> throw new IllegalArgumentException("unknown dtype '" + name
                    + "'; allowed: float32, float64, float16, bfloat16, int32, int64, bool");
        }
    }

    /**
     * Finds the dtype a safetensors header names ({@code F32}, {@code I64}, {@code BF16}...).
     *
     * @throws IllegalArgumentException when the name is not one tensorbus stores
     */
    public static DType fromSafetensors(String name) {
        for (DType t : values()) {
            if (t.safetensorsName.equals(name)) {
                return t;
            }
        }
        throw new IllegalArgumentException("unsupported safetensors dtype '" + name
                + "'; supported: F32, F64, F16, BF16, I32, I64, BOOL");
    }

    @Override
    public String toString() {
        return torchName;
    }
}
