package io.tensorbus.internal.distributed;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.tensorbus.Device;
import io.tensorbus.tensor.DeviceMemory;
import io.tensorbus.tensor.HostMemory;
import io.tensorbus.tensor.MemoryStats;
import java.lang.ref.WeakReference;
import java.time.Duration;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.function.DoubleSupplier;
import java.util.function.Function;
import java.util.function.Supplier;
import java.util.function.ToDoubleFunction;
import java.util.function.ToLongFunction;

/**
 * The meters of this process and the registries the public {@code TensorbusMetrics} binds: the recording handles
 * the groups, the RPC agent, DDP and the stores keep ({@link Operation}, {@link Summary}) and the gauges they
 * register ({@link PolledMeter}). With no registry bound, {@link #on()} is false and {@link #start()} answers 0:
 * the recording sites skip all work for a volatile read and a branch. A handle resolves its meters on every bound
 * registry at its first use after a registry is bound or unbound, so recording costs the meters' own updates only;
 * gauges are kept here and registered on each registry when it is bound, so that a registry bound late sees the
 * gauges of objects made before. Thread-safe.
 */
public final class Meters {
    /** The prefix of every meter name. */
    public static final String PREFIX = "tensorbus.";
    /** The outcome tag of an operation that succeeded, as Micrometer's HTTP meters name it. */
    public static final String SUCCESS = "success";
    /** The outcome tag of a failed operation. */
    public static final String FAILURE = "failure";
    private static final Duration MIN_EXPECTED = Duration.ofNanos(1_000);
    private static final Duration MAX_EXPECTED = Duration.ofMinutes(10);
    private static final String[] SIZE_CLASSES = {"<=16B", "<=256B", "<=4KiB", "<=64KiB", "<=1MiB", "<=16MiB",
        "<=256MiB"};
    private static final String LARGEST_SIZE_CLASS = ">256MiB";
    private static final Map<Key, Operation> OPERATIONS = new ConcurrentHashMap<>();
    private static final Map<Key, Summary> SUMMARIES = new ConcurrentHashMap<>();
    private static final Set<PolledMeter> POLLED = ConcurrentHashMap.newKeySet();
    private static final Map<MeterRegistry, Integer> BINDINGS = new IdentityHashMap<>();
    private static volatile Snapshot current = new Snapshot(new MeterRegistry[0]);

    private static final Set<Device> DEVICES = ConcurrentHashMap.newKeySet();

    static {
        memory(Device.CPU, HostMemory::stats);
    }

    /** A meter's name and tags, the key of the handles' caches. */
    private record Key(String name, List<String> tags) {
    }

    /** The registries bound at one time; a new one is made at every bind and unbind. */
    private record Snapshot(MeterRegistry[] registries) {
    }

    private Meters() {
    }

    /** True when a registry is bound and operations should be recorded. */
    public static boolean on() {
        return current.registries.length > 0;
    }

    /** Binds {@code registry} (counting its bindings): recording turns on, and the live gauges appear on it. */
    public static synchronized void bind(MeterRegistry registry) {
        if (BINDINGS.merge(registry, 1, Integer::sum) == 1) {
            current = new Snapshot(BINDINGS.keySet().toArray(MeterRegistry[]::new));
            POLLED.forEach(g -> g.bindTo(registry));
        }
    }

    /** Takes one binding of {@code registry} back; at its last, its gauges go, and recording stops with none left. */
    public static synchronized void unbind(MeterRegistry registry) {
        if (BINDINGS.computeIfPresent(registry, (r, n) -> n == 1 ? null : n - 1) == null) {
            current = new Snapshot(BINDINGS.keySet().toArray(MeterRegistry[]::new));
            POLLED.forEach(g -> g.unbindFrom(registry));
        }
    }

    /** The registries bound now (none: metrics are off). */
    public static List<MeterRegistry> registries() {
        return List.of(current.registries);
    }

    /** Now, for a later record, or 0 when metrics are off (the handles then record nothing). */
    public static long start() {
        return current.registries.length > 0 ? System.nanoTime() : 0;
    }

    /**
     * The handle of operations {@code name} with {@code tags} (key, value pairs); with {@code countsBytes}, of
     * their bytes too. Costs a lookup: keep what it answers.
     */
    public static Operation operation(String name, boolean countsBytes, String... tags) {
        return OPERATIONS.computeIfAbsent(new Key(name, List.of(tags)), k -> new Operation(name, tags.clone(),
                countsBytes));
    }

    /** The handle of the distribution summary {@code name} with {@code tags}: keep it. */
    public static Summary summary(String name, String... tags) {
        return SUMMARIES.computeIfAbsent(new Key(name, List.of(tags)), k -> new Summary(new Bound<>(r ->
                DistributionSummary.builder(name).tags(tags).publishPercentiles(0.5, 0.9, 0.99).register(r))));
    }

    /**
     * A gauge {@code name} that reads {@code f} of {@code object} (held weakly: NaN once it is collected) on every
     * bound registry, now and later, until {@link PolledMeter#remove()}.
     */
    public static <T> PolledMeter gauge(String name, T object, ToDoubleFunction<T> f, String baseUnit,
                                        String... tags) {
        WeakReference<T> ref = new WeakReference<>(object);
        ToDoubleFunction<WeakReference<T>> read = r -> {
            T o = r.get();
            return o == null ? Double.NaN : f.applyAsDouble(o);
        };
        return polled(r -> Gauge.builder(name, ref, read).tags(tags).baseUnit(baseUnit).strongReference(true)
                .register(r));
    }

    /**
     * A counter {@code name} whose running total {@code total} reads (of a value that never decreases) on every
     * bound registry, now and later, until {@link PolledMeter#remove()}; the handle holds {@code total} (Micrometer
     * holds it weakly).
     */
    public static PolledMeter functionCounter(String name, DoubleSupplier total, String baseUnit, String description,
                                              String... tags) {
        return polled(r -> FunctionCounter.builder(name, total, DoubleSupplier::getAsDouble).tags(tags)
                .baseUnit(baseUnit).description(description).register(r));
    }

    private static PolledMeter polled(Function<MeterRegistry, Meter> register) {
        PolledMeter m = new PolledMeter(register);
        synchronized (Meters.class) {
            POLLED.add(m);
            for (MeterRegistry r : current.registries) {
                m.bindTo(r);
            }
        }
        return m;
    }

    /**
     * Publishes the caching allocator's statistics of {@code device} ({@code tensorbus.memory.allocated},
     * {@code .peak} and {@code .cached}, tagged {@code device}) for the rest of the process; once per device.
     * A device whose runtime cannot answer reads NaN.
     */
    public static void deviceMemory(Device device) {
        if (!device.isCpu() && DEVICES.add(device)) {
            memory(device, () -> DeviceMemory.stats(device));
        }
    }

    private static void memory(Device device, Supplier<MemoryStats> stats) {
        String tag = device.toString();
        // Held by the class, for good: the gauges read whatever the device's allocator says now.
        gauge(PREFIX + "memory.allocated", Meters.class, c -> read(stats, MemoryStats::allocatedBytes), "bytes",
                "device", tag);
        gauge(PREFIX + "memory.peak", Meters.class, c -> read(stats, MemoryStats::peakAllocatedBytes), "bytes",
                "device", tag);
        gauge(PREFIX + "memory.cached", Meters.class, c -> read(stats, MemoryStats::cachedBytes), "bytes",
                "device", tag);
    }

    private static double read(Supplier<MemoryStats> stats, ToLongFunction<MemoryStats> f) {
        try {
            return f.applyAsLong(stats.get());
        } catch (RuntimeException e) {
            return Double.NaN;
        }
    }

    /**
     * The size class of a message of {@code bytes}, the {@code size} tag of the communication meters: a tag per
     * power of 16 keeps the series few while small and large messages stay apart.
     */
    public static String sizeClass(long bytes) {
        long bound = 16;
        for (String n : SIZE_CLASSES) {
            if (bytes <= bound) {
                return n;
            }
            bound <<= 4;
        }
        return LARGEST_SIZE_CLASS;
    }

    /** One meter on every bound registry, resolved again after each bind and unbind. */
    private static final class Bound<M extends Meter> {
        private record Resolved(Snapshot of, Meter[] meters) {
        }

        private final Function<MeterRegistry, M> register;
        private volatile Resolved resolved;

        Bound(Function<MeterRegistry, M> register) {
            this.register = register;
        }

        /** The meter on each registry of {@code s}. */
        Meter[] on(Snapshot s) {
            Resolved r = resolved;
            if (r == null || r.of != s) {
                Meter[] meters = new Meter[s.registries.length];
                for (int i = 0; i < meters.length; i++) {
                    meters[i] = register.apply(s.registries[i]);
                }
                r = new Resolved(s, meters);
                resolved = r;
            }
            return r.meters;
        }
    }

    /**
     * The meters of one kind of operation ({@code name} with fixed tags): a timer per outcome, with a percentile
     * histogram from 1 us to 10 min, and, where bytes are counted, the counter {@code name + ".bytes"}.
     */
    public static final class Operation {
        private final Bound<Timer> success;
        private final Bound<Timer> failure;
        private final Bound<Counter> bytes;

        private Operation(String name, String[] tags, boolean countsBytes) {
            this.success = timer(name, tags, SUCCESS);
            this.failure = timer(name, tags, FAILURE);
            this.bytes = countsBytes ? new Bound<>(r -> Counter.builder(name + ".bytes").tags(tags).baseUnit("bytes")
                    .register(r)) : null;
        }

        private static Bound<Timer> timer(String name, String[] tags, String outcome) {
            return new Bound<>(r -> Timer.builder(name).tags(tags).tag("outcome", outcome).publishPercentileHistogram()
                    .minimumExpectedValue(MIN_EXPECTED).maximumExpectedValue(MAX_EXPECTED).register(r));
        }

        /**
         * Records one operation that started at {@code startNanos} ({@link #start()}; 0: metrics were off, and
         * nothing is recorded) and ended now, failed when {@code cause} is not null, with {@code bytes} (counted
         * when positive and this kind counts them).
         */
        public void record(long startNanos, long bytes, Throwable cause) {
            if (startNanos != 0) {
                record(startNanos, System.nanoTime(), bytes, cause);
            }
        }

        /**
         * Records one operation that ran from {@code startNanos} ({@link #start()}; 0: nothing is recorded) to
         * {@code endNanos} ({@link System#nanoTime()}), for a caller that reads the clock at the end anyway.
         */
        public void record(long startNanos, long endNanos, long bytes, Throwable cause) {
            Snapshot s = current;
            if (startNanos == 0 || s.registries.length == 0) {
                return;
            }
            long elapsed = endNanos - startNanos;
            for (Meter t : (cause == null ? success : failure).on(s)) {
                ((Timer) t).record(elapsed, TimeUnit.NANOSECONDS);
            }
            if (this.bytes != null && bytes > 0) {
                for (Meter c : this.bytes.on(s)) {
                    ((Counter) c).increment(bytes);
                }
            }
        }
    }

    /** A distribution summary on every bound registry. */
    public static final class Summary {
        private final Bound<DistributionSummary> summary;

        private Summary(Bound<DistributionSummary> summary) {
            this.summary = summary;
        }

        /** Records {@code value} when metrics are on. */
        public void record(double value) {
            Snapshot s = current;
            for (Meter m : summary.on(s)) {
                ((DistributionSummary) m).record(value);
            }
        }
    }

    /** A meter that reads its value when a registry asks (a gauge, a function counter) on every bound registry. */
    public static final class PolledMeter {
        private final Function<MeterRegistry, Meter> register;
        private final Map<MeterRegistry, Meter> registered = new IdentityHashMap<>();

        private PolledMeter(Function<MeterRegistry, Meter> register) {
            this.register = register;
        }

        private synchronized void bindTo(MeterRegistry r) {
            registered.computeIfAbsent(r, register);
        }

        private synchronized void unbindFrom(MeterRegistry r) {
            Meter m = registered.remove(r);
            if (m != null) {
                r.remove(m);
            }
        }

        /** Removes the meter from every registry, now and later (what its object does when it closes). */
        public void remove() {
            synchronized (Meters.class) {
                POLLED.remove(this);
                for (MeterRegistry r : current.registries) {
                    unbindFrom(r);
                }
            }
        }
    }
}
