package io.tensorbus.internal.tensor;

/**
 * Packing buffers kept per thread, so that small GEMMs called in a loop (a convolution per image, a
 * linear layer per step) do not allocate and zero hundreds of KiB each time. Bounded by the block sizes
 * (under 1 MiB per thread). A GEMM never calls out while it holds them, so one set per thread suffices.
 */
final class GemmBuffers {
    private static final ThreadLocal<GemmBuffers> LOCAL = ThreadLocal.withInitial(GemmBuffers::new);

    private final float[][] floats = new float[3][];
    private int[] ints;

    private GemmBuffers() {
    }

    /** This thread's float buffer {@code slot} (0 to 2), at least {@code length} long; contents undefined. */
    static float[] floats(int slot, int length) {
        float[][] f = LOCAL.get().floats;
        if (f[slot] == null || f[slot].length < length) {
            f[slot] = new float[length];
        }
        return f[slot];
    }

    /** This thread's int buffer, at least {@code length} long; contents undefined. */
    static int[] ints(int length) {
        GemmBuffers b = LOCAL.get();
        if (b.ints == null || b.ints.length < length) {
            b.ints = new int[length];
        }
        return b.ints;
    }
}
