package io.tensorbus.internal.distributed;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.composite.CompositeMeterRegistry;
import io.tensorbus.tensor.HostMemory;
import java.time.Duration;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.function.ToDoubleFunction;

/**
 * The meters of this process: one composite registry the public {@code TensorbusMetrics} binds the application's
 * registries to, and the recording calls the groups, the RPC agent, DDP, pipelines and stores make. With no
 * registry bound, {@link #on()} is false and the recording sites skip all work: a volatile read and a branch.
 * Gauges are registered on the composite whether or not it is on (once per object, at its creation), so that a
 * registry bound later sees them too. Thread-safe.
 */
public final class Meters {
    /** The prefix of every meter name. */
    public static final String PREFIX = "tensorbus.";
    /** Outcome tag values, as Micrometer's HTTP meters name them. */
    public static final String SUCCESS = "success";
    /** The outcome tag of a failed operation. */
    public static final String FAILURE = "failure";
    private static final CompositeMeterRegistry REGISTRY = new CompositeMeterRegistry();
    private static final Duration MIN_EXPECTED = Duration.ofNanos(1_000);
    private static final Duration MAX_EXPECTED = Duration.ofMinutes(10);
    private static final Map<Key, Timer> TIMERS = new ConcurrentHashMap<>();
    private static final Map<Key, Counter> COUNTERS = new ConcurrentHashMap<>();
    private static final Map<Key, DistributionSummary> SUMMARIES = new ConcurrentHashMap<>();
    private static final Map<MeterRegistry, Integer> BINDINGS = new IdentityHashMap<>();
    private static volatile boolean on;

    static {
        Meters.gauge(PREFIX + "memory.allocated", Meters.class, c -> HostMemory.stats().allocatedBytes(), "bytes",
                "device", "cpu");
        Meters.gauge(PREFIX + "memory.peak", Meters.class, c -> HostMemory.stats().peakAllocatedBytes(), "bytes",
                "device", "cpu");
        Meters.gauge(PREFIX + "memory.cached", Meters.class, c -> HostMemory.stats().cachedBytes(), "bytes",
                "device", "cpu");
    }

    /** A meter's name and tags, the key of the caches in front of the registry's own lookup. */
    private record Key(String name, List<String> tags) {
    }

    private Meters() {
    }

    /** True when a registry is bound and operations should be recorded. */
    public static boolean on() {
        return on;
    }

    /** The composite registry every meter of tensorbus is registered on. */
    public static MeterRegistry registry() {
        return REGISTRY;
    }

    /** Adds {@code registry} to the composite (counting its bindings) and turns recording on. */
    public static synchronized void bind(MeterRegistry registry) {
        if (BINDINGS.merge(registry, 1, Integer::sum) == 1) {
            REGISTRY.add(registry);
        }
        on = true;
    }

    /** Takes one binding of {@code registry} back; its last removes it, and recording stops when none is left. */
    public static synchronized void unbind(MeterRegistry registry) {
        Integer left = BINDINGS.computeIfPresent(registry, (r, n) -> n == 1 ? null : n - 1);
        if (left == null) {
            REGISTRY.remove(registry);
        }
        on = !BINDINGS.isEmpty();
    }

    /** Now, for a later record, or 0 when metrics are off (the recording calls then ignore it). */
    public static long start() {
        return on ? System.nanoTime() : 0;
    }

    /**
     * Records one operation that started at {@code startNanos} ({@link #start()}) and ended now: a timer
     * {@code name} with the {@code tags} (key, value pairs) and an {@code outcome} tag, and, when {@code bytes}
     * is positive, the counter {@code name + ".bytes"} with the same tags but the outcome.
     */
    public static void operation(String name, long startNanos, long bytes, Throwable failure, String... tags) {
        if (!on || startNanos == 0) {
            return;
        }
        long elapsed = System.nanoTime() - startNanos;
        timer(name, failure == null ? SUCCESS : FAILURE, tags).record(elapsed, TimeUnit.NANOSECONDS);
        if (bytes > 0) {
            counter(name + ".bytes", tags).increment(bytes);
        }
    }

    /** Adds {@code amount} to the counter {@code name} with {@code tags}. */
    public static void count(String name, double amount, String... tags) {
        if (on) {
            counter(name, tags).increment(amount);
        }
    }

    /** Records {@code value} in the distribution summary {@code name} with {@code tags}. */
    public static void summary(String name, double value, String... tags) {
        if (on) {
            SUMMARIES.computeIfAbsent(new Key(name, List.of(tags)), k -> DistributionSummary.builder(name)
                    .tags(tags).publishPercentiles(0.5, 0.9, 0.99).register(REGISTRY)).record(value);
        }
    }

    /**
     * Registers a gauge {@code name} that reads {@code f} of {@code object} (held weakly, as Micrometer's gauges
     * hold it), and answers it for {@link #remove}.
     */
    public static <T> Meter gauge(String name, T object, ToDoubleFunction<T> f, String baseUnit, String... tags) {
        return Gauge.builder(name, object, f).tags(tags).baseUnit(baseUnit).register(REGISTRY);
    }

    /** Removes {@code meters} from every registry (what an object registered when it closes). */
    public static void remove(Meter... meters) {
        for (Meter m : meters) {
            if (m != null) {
                REGISTRY.remove(m);
            }
        }
    }

    /**
     * The size class of a message of {@code bytes}, the {@code size} tag of the communication meters: a tag per
     * power of 16 keeps the series few while small and large messages stay apart.
     */
    public static String sizeClass(long bytes) {
        long bound = 16;
        String[] names = {"16B", "256B", "4KiB", "64KiB", "1MiB", "16MiB", "256MiB"};
        for (String n : names) {
            if (bytes <= bound) {
                return "<=" + n;
            }
            bound <<= 4;
        }
        return ">256MiB";
    }

    private static Timer timer(String name, String outcome, String[] tags) {
        String[] all = new String[tags.length + 2];
        System.arraycopy(tags, 0, all, 0, tags.length);
        all[tags.length] = "outcome";
        all[tags.length + 1] = outcome;
        return TIMERS.computeIfAbsent(new Key(name, List.of(all)), k -> Timer.builder(name).tags(Tags.of(all))
                .publishPercentileHistogram().minimumExpectedValue(MIN_EXPECTED).maximumExpectedValue(MAX_EXPECTED)
                .register(REGISTRY));
    }

    private static Counter counter(String name, String[] tags) {
        return COUNTERS.computeIfAbsent(new Key(name, List.of(tags)), k -> Counter.builder(name).tags(tags)
                .baseUnit(name.endsWith(".bytes") ? "bytes" : null)
                .register(REGISTRY));
    }
}
