package io.tensorbus.io.impl;

import io.tensorbus.DType;

/**
 * The one-byte tags that start every value in {@link io.tensorbus.io.ObjectCodec}'s format, and the stable
 * dtype codes of its tensors. The numbers are part of the wire format: never renumber, only add.
 */
public final class CodecTag {
    /** The format version this code writes and the only one it reads. */
    public static final int VERSION = 1;

    /** {@code null}. */
    public static final int NULL = 0;
    /** {@code Boolean.FALSE}. */
    public static final int FALSE = 1;
    /** {@code Boolean.TRUE}. */
    public static final int TRUE = 2;
    /** A Byte: one byte. */
    public static final int BYTE = 3;
    /** A Short: 2 bytes. */
    public static final int SHORT = 4;
    /** An Integer: 4 bytes. */
    public static final int INT = 5;
    /** A Long: 8 bytes. */
    public static final int LONG = 6;
    /** A Float: its 4 raw IEEE bytes. */
    public static final int FLOAT = 7;
    /** A Double: its 8 raw IEEE bytes. */
    public static final int DOUBLE = 8;
    /** A Character: its 2-byte UTF-16 code unit. */
    public static final int CHAR = 9;
    /** A String: byte length, UTF-8 bytes. */
    public static final int STRING = 10;
    /** A byte[]: length, bytes. */
    public static final int BYTES = 11;
    /** An int[]: length, 4 bytes each. */
    public static final int INTS = 12;
    /** A long[]: length, 8 bytes each. */
    public static final int LONGS = 13;
    /** A float[]: length, 4 bytes each. */
    public static final int FLOATS = 14;
    /** A double[]: length, 8 bytes each. */
    public static final int DOUBLES = 15;
    /** A tensor: dtype code, flags, rank, dimensions, element bytes. */
    public static final int TENSOR = 16;
    /** A List: count, values. */
    public static final int LIST = 17;
    /** A Map: count, key and value pairs. */
    public static final int MAP = 18;
    /** A Set: count, values. */
    public static final int SET = 19;
    /** A registered record: name, component count, components. */
    public static final int RECORD = 20;
    /** A registered enum constant: type name, constant name. */
    public static final int ENUM = 21;
    /** A value of a type registered with an adapter: name, the adapter's portable value. */
    public static final int CUSTOM = 22;
    /** The highest tag this version knows. */
    public static final int LAST = CUSTOM;

    /** Tensor flag bit: the tensor requires gradients. */
    public static final int FLAG_REQUIRES_GRAD = 1;

    private static final DType[] DTYPES = {
        DType.FLOAT32, DType.FLOAT64, DType.FLOAT16, DType.BFLOAT16, DType.INT32, DType.INT64, DType.BOOL
    };

    private CodecTag() {
    }

    /** The wire code of a dtype (its position in the table above, independent of enum order). */
    public static int dtypeCode(DType dtype) {
        for (int i = 0; i < DTYPES.length; i++) {
            if (DTYPES[i] == dtype) {
                return i;
            }
        }
        throw new IllegalArgumentException("dtype " + dtype + " has no wire code in ObjectCodec");
    }

    /** The dtype of a wire code, or null when the code is unknown. */
    public static DType dtype(int code) {
        return code >= 0 && code < DTYPES.length ? DTYPES[code] : null;
    }

    /** The known dtype codes as {@code 0=float32, 1=float64, ...}, for messages. */
    public static String dtypeCodes() {
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < DTYPES.length; i++) {
            sb.append(i > 0 ? ", " : "").append(i).append('=').append(DTYPES[i]);
        }
        return sb.toString();
    }
}
