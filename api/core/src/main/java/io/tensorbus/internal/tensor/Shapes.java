package io.tensorbus.internal.tensor;

import java.util.Arrays;

/** Shape arithmetic shared by every op: element counts, strides, broadcasting, dimension checks. */
public final class Shapes {
    private Shapes() {
    }

    /**
     * The number of elements of a shape.
     *
     * @throws IllegalArgumentException for a negative size or more than {@link Integer#MAX_VALUE} elements
     */
    public static int numel(int[] shape) {
        long n = 1;
        for (int s : shape) {
            if (s < 0) {
                throw new IllegalArgumentException("negative size " + s + " in shape " + Arrays.toString(shape));
            }
            n *= s;
            if (n > Integer.MAX_VALUE) {
                throw new IllegalArgumentException("shape " + Arrays.toString(shape)
                        + " has more than " + Integer.MAX_VALUE + " elements, the most one tensor may hold");
            }
        }
        return (int) n;
    }

    /** Row-major (C order) strides, in elements. */
    public static int[] contiguousStrides(int[] shape) {
        int[] strides = new int[shape.length];
        int s = 1;
        for (int i = shape.length - 1; i >= 0; i--) {
            strides[i] = s;
            s *= Math.max(shape[i], 1);
        }
        return strides;
    }

    /** True when a tensor with these shape and strides is laid out in row-major order without gaps. */
    public static boolean isContiguous(int[] shape, int[] strides) {
        for (int s : shape) {
            if (s == 0) {
                return true; // an empty tensor has no layout to speak of (as PyTorch)
            }
        }
        int expected = 1;
        for (int i = shape.length - 1; i >= 0; i--) {
            if (shape[i] != 1 && strides[i] != expected) {
                return false;
            }
            expected *= shape[i];
        }
        return true;
    }

    /**
     * NumPy broadcasting of two shapes.
     *
     * @throws IllegalArgumentException naming both shapes and the first dimension that does not match
     */
    public static int[] broadcast(int[] a, int[] b) {
        int n = Math.max(a.length, b.length);
        int[] out = new int[n];
        for (int i = 0; i < n; i++) {
            int da = i < n - a.length ? 1 : a[i - (n - a.length)];
            int db = i < n - b.length ? 1 : b[i - (n - b.length)];
            if (da != db && da != 1 && db != 1) {
                throw new IllegalArgumentException("shapes " + Arrays.toString(a) + " and " + Arrays.toString(b)
                        + " cannot be broadcast: size " + da + " vs " + db + " at dimension " + i
                        + " of the result (sizes must match or one of them be 1)");
            }
            out[i] = da == 1 ? db : da;
        }
        return out;
    }

    /**
     * Turns a possibly negative dimension into an index in {@code [0, rank)}.
     *
     * @throws IllegalArgumentException when {@code dim} is outside {@code [-rank, rank)}
     */
    public static int normalizeDim(int dim, int rank) {
        int r = Math.max(rank, 1);
        if (dim < -r || dim >= r) {
            throw new IllegalArgumentException("dimension " + dim + " is out of range for a tensor of "
                    + rank + " dimensions (allowed: " + -r + " to " + (r - 1) + ")");
        }
        return dim < 0 ? dim + r : dim;
    }

    /**
     * The storage index of the element at {@code index} (negative entries count from the end) of a tensor of
     * this geometry.
     *
     * @throws IllegalArgumentException for the wrong number of indices or one out of range
     */
    public static long elementOffset(int[] shape, int[] strides, long offset, int[] index) {
        if (index.length != shape.length) {
            throw new IllegalArgumentException("got " + index.length + " indices for a tensor of "
                    + shape.length + " dimensions (shape " + str(shape) + ")");
        }
        long o = offset;
        for (int d = 0; d < index.length; d++) {
            int i = index[d] < 0 ? index[d] + shape[d] : index[d];
            if (i < 0 || i >= shape[d]) {
                throw new IllegalArgumentException("index " + index[d] + " is out of bounds for dimension " + d
                        + " with size " + shape[d]);
            }
            o += (long) i * strides[d];
        }
        return o;
    }

    /** A shape as PyTorch prints it: {@code [2, 3]}. */
    public static String str(int[] shape) {
        return Arrays.toString(shape);
    }
}
