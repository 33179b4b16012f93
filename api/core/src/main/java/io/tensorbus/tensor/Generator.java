package io.tensorbus.tensor;

import java.util.random.RandomGenerator;
import java.util.random.RandomGeneratorFactory;

/**
 * A seeded source of random numbers for {@code rand}, {@code randn}, {@code randint}, dropout and shuffling,
 * as PyTorch's {@code torch.Generator}: the same seed gives the same sequence on every run and machine.
 * Not thread-safe: use one per thread, or the synchronized {@link #defaultGenerator()}.
 */
public final class Generator {
    private static final RandomGeneratorFactory<RandomGenerator> FACTORY =
            RandomGeneratorFactory.of("L64X128MixRandom");
    private static final Generator DEFAULT = new Generator(0x5eed);

    private RandomGenerator random;
    private long seed;

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
