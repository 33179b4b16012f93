package io.tensorbus.internal.tensor;

import io.tensorbus.tensor.Generator;

/**
 * The counter-based generator Philox4x32-10 (Salmon et al., "Parallel random numbers: as easy as 1, 2, 3", as
 * Random123 and PyTorch's CUDA generator have it): element {@code i} of a draw at {@code offset} is word
 * {@code i % 4} of the block at counter {@code offset + i / 4}, keyed by the seed. Any element is computed
 * alone, so a device computes the same values in parallel as the host does in a loop; {@link #SOURCE} is the
 * same function in the kernel dialect.
 */
public final class Philox {
    /** The dialect's {@code philox_uniform(seed, offset, i)}: the value {@link #uniform} computes. */
    public static final String SOURCE = """
            DEVICE_FN double philox_uniform(ulong seed, ulong offset, ulong i) {
                ulong ctr = offset + i / 4;
                uint c0 = (uint) ctr;
                uint c1 = (uint) (ctr >> 32);
                uint c2 = 0;
                uint c3 = 0;
                uint k0 = (uint) seed;
                uint k1 = (uint) (seed >> 32);
                for (int r = 0; r < 10; r++) {
                    ulong p0 = (ulong) 0xD2511F53u * (ulong) c0;
                    ulong p1 = (ulong) 0xCD9E8D57u * (ulong) c2;
                    uint n0 = ((uint) (p1 >> 32)) ^ c1 ^ k0;
                    uint n2 = ((uint) (p0 >> 32)) ^ c3 ^ k1;
                    c1 = (uint) p1;
                    c3 = (uint) p0;
                    c0 = n0;
                    c2 = n2;
                    k0 += 0x9E3779B9u;
                    k1 += 0xBB67AE85u;
                }
                uint w = (i % 4) == 0 ? c0 : (i % 4) == 1 ? c1 : (i % 4) == 2 ? c2 : c3;
                return (double) (w >> 8) * (1.0 / 16777216.0);
            }

            """;

    private static final long M0 = 0xD2511F53L;
    private static final long M1 = 0xCD9E8D57L;
    private static final int W0 = 0x9E3779B9;
    private static final int W1 = 0xBB67AE85;
    private static final long MASK = 0xffffffffL;

    private Philox() {
    }

    /**
     * Takes the counters of {@code n} draws from {@code g}'s counter-based stream: returns the offset they start at
     * and moves the generator past them.
     *
     * @throws IllegalArgumentException for a negative {@code n}
     * @throws IllegalStateException when the offset would pass {@code Long.MAX_VALUE}
     */
    public static long reserve(Generator g, long n) {
        if (n < 0) {
            throw new IllegalArgumentException("cannot draw " + n + " values");
        }
        long blocks = (n + 3) / 4;
        synchronized (g) {
            long at = g.offset();
            if (at > Long.MAX_VALUE - blocks) {
                throw new IllegalStateException("the generator's offset " + at + " leaves no room for " + n
                        + " more draws; reseed it with manualSeed or move it with setOffset");
            }
            g.setOffset(at + blocks);
            return at;
        }
    }

    /** The four 32-bit words of the block at {@code counter} (its two high words 0) under {@code key}. */
    public static int[] block(long key, long counter) {
        return block(key, (int) counter, (int) (counter >>> 32), 0, 0);
    }

    /** Philox4x32-10 of the counter {@code (ctr0, ..., ctr3)} under the key {@code (low, high word of key)}. */
    public static int[] block(long key, int ctr0, int ctr1, int ctr2, int ctr3) {
        int c0 = ctr0;
        int c1 = ctr1;
        int c2 = ctr2;
        int c3 = ctr3;
        int k0 = (int) key;
        int k1 = (int) (key >>> 32);
        for (int r = 0; r < 10; r++) {
            long p0 = M0 * (c0 & MASK);
            long p1 = M1 * (c2 & MASK);
            int n0 = (int) (p1 >>> 32) ^ c1 ^ k0;
            int n2 = (int) (p0 >>> 32) ^ c3 ^ k1;
            c1 = (int) p1;
            c3 = (int) p0;
            c0 = n0;
            c2 = n2;
            k0 += W0;
            k1 += W1;
        }
        return new int[] {c0, c1, c2, c3};
    }

    /** Element {@code i} of the draw at {@code offset}, uniform in {@code [0, 1)} on a grid of 2^-24. */
    public static double uniform(long seed, long offset, long i) {
        return toUniform(block(seed, offset + i / 4)[(int) (i % 4)]);
    }

    /**
     * Fills {@code out} with the draw at {@code offset}: {@code out[i] = uniform(seed, offset, i)}, one block per four
     * elements.
     */
    public static void fill(long seed, long offset, double[] out) {
        for (int b = 0; b * 4 < out.length; b++) {
            int[] w = block(seed, offset + b);
            for (int j = 0; j < 4 && b * 4 + j < out.length; j++) {
                out[b * 4 + j] = toUniform(w[j]);
            }
        }
    }

    private static double toUniform(int word) {
        return (word >>> 8) * 0x1.0p-24;
    }
}
