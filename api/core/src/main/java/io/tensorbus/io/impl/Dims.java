package io.tensorbus.io.impl;

import io.tensorbus.io.TensorFormatException;
import java.util.List;

/** Shape checks shared by the readers: dimensions and element counts that tensorbus can hold. */
public final class Dims {
    private Dims() {
    }

    /** A shape as {@code [2, 3]} (and {@code []} for a scalar), for messages. */
    public static String str(int[] shape) {
        StringBuilder sb = new StringBuilder("[");
        for (int i = 0; i < shape.length; i++) {
            sb.append(i > 0 ? ", " : "").append(shape[i]);
        }
        return sb.append(']').toString();
    }

    /** The number of elements of a shape (1 for a scalar). */
    public static long numel(int[] shape) {
        long n = 1;
        for (int d : shape) {
            n *= d;
        }
        return n;
    }

    /**
     * Turns file dimensions into a tensorbus shape.
     *
     * @param dims the dimensions as read (each a non-negative number)
     * @throws TensorFormatException when a dimension is negative or the element count exceeds
     *     {@link Integer#MAX_VALUE}, the largest tensor tensorbus holds
     */
    public static int[] shape(List<Long> dims, String source) throws TensorFormatException {
        int[] shape = new int[dims.size()];
        long n = 1;
        for (int i = 0; i < shape.length; i++) {
            long d = dims.get(i);
            if (d < 0) {
                throw new TensorFormatException(source, "shape dimension " + i + " is negative (" + d
                        + "); dimensions must be >= 0");
            }
            n = d == 0 || n == 0 ? 0 : (d > Integer.MAX_VALUE || n > Integer.MAX_VALUE / d ? -1 : n * d);
            if (n < 0) {
                throw new TensorFormatException(source, "shape " + dims + " has more than " + Integer.MAX_VALUE
                        + " elements, the most a tensorbus tensor holds");
            }
            shape[i] = (int) d;
        }
        return shape;
    }
}
