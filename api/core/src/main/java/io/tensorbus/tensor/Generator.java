package io.tensorbus.tensor;

import java.util.random.RandomGenerator;
import java.util.random.RandomGeneratorFactory;

/**
 * A seeded source of random numbers for {@code rand}, {@code randn}, {@code randint}, dropout and shuffling,
 * as PyTorch's {@code torch.Generator}: the same seed gives the same sequence on every run and machine.
 * Not thread-safe: use one per thread, or the synchronized {@link #defaultGenerator()}.
 *
 * <p>Dropout draws from a second, counter-based stream (Philox4x32-10 keyed by the seed, as PyTorch's CUDA
 * generator): its {@link #offset()} counts the draws taken, so a host and a device draw the same masks from the
 * same seed and offset.
 */
public final class Generator {
    private static final RandomGeneratorFactory<RandomGenerator> FACTORY =
            RandomGeneratorFactory.of("L64X128MixRandom");
    private static final Generator DEFAULT = new Generator(0x5eed);

    private RandomGenerator random;
    private long seed;
    private long offset;

    /** A generator started from {@code seed}. */
    public Generator(long seed) {
        manualSeed(seed);
    }

    /** The process-wide generator that factories use when none is passed. */
    public static Generator defaultGenerator() {
        return DEFAULT;
    }

    /** Restarts the sequence from {@code seed} ({@code torch.manual_seed}). */
    public synchronized Generator manualSeed(long seed) {
        this.seed = seed;
        this.random = FACTORY.create(seed);
        this.offset = 0;
        return this;
    }

    /**
     * The position in the counter-based stream that dropout draws from, as {@code torch.Generator.get_offset}
     * but counted in blocks of four 32-bit words (PyTorch counts the words); {@link #manualSeed} sets it to 0.
     */
    public synchronized long offset() {
        return offset;
    }

    /**
     * Moves the counter-based stream to {@code offset}, as {@code torch.Generator.set_offset}: draws from there on
     * repeat those made from the same seed and offset.
     *
     * @throws IllegalArgumentException for a negative offset
     */
    public synchronized Generator setOffset(long offset) {
        if (offset < 0) {
            throw new IllegalArgumentException("generator offset must be >= 0, got " + offset);
        }
        this.offset = offset;
        return this;
    }

    /** The seed of the current sequence. */
    public synchronized long initialSeed() {
        return seed;
    }

    /** Uniform in {@code [0, 1)}. */
    public synchronized double nextDouble() {
        return random.nextDouble();
    }

    /** Standard normal. */
    public synchronized double nextGaussian() {
        return random.nextGaussian();
    }

    /** Uniform in {@code [low, high)}; requires {@code low < high}. */
    public synchronized long nextLong(long low, long high) {
        return random.nextLong(low, high);
    }
}
