package io.tensorbus.distributed;

import java.util.Locale;

/**
 * How much the distributed layer tells about itself ({@code TORCH_DISTRIBUTED_DEBUG}), read from
 * {@code TENSORBUS_DISTRIBUTED_DEBUG} or the system property {@code tensorbus.distributed.debug}: {@link #OFF} by
 * default; {@link #INFO} logs each process group's creation and each DistributedDataParallel's buckets;
 * {@link #DETAIL} also logs every collective as it ends (sequence number, operation, sizes, duration), which costs
 * a log line per operation. The flight recorder ({@link FlightRecorder}) runs at every level.
 */
public enum DebugLevel {
    /** Nothing beyond warnings. */
    OFF,
    /** Creation of groups and DDP's bucket layout. */
    INFO,
    /** {@link #INFO} and every collective. */
    DETAIL;

    /** The environment variable, as PyTorch's {@code TORCH_DISTRIBUTED_DEBUG}. */
    public static final String ENV = "TENSORBUS_DISTRIBUTED_DEBUG";
    /** The system property that overrides {@link #ENV}. */
    public static final String PROPERTY = "tensorbus.distributed.debug";
    // A process's environment never changes, and reading it costs a map lookup with a fresh key: the flight recorder
    // asks at every operation.
    private static final String FROM_ENV = System.getenv(ENV);

    /**
     * The level this process runs at, the property read each time (a test or a long-lived service may change it).
     *
     * @throws IllegalArgumentException when the setting is not OFF, INFO or DETAIL (in any case)
     */
    public static DebugLevel current() {
        String v = System.getProperty(PROPERTY, FROM_ENV);
        if (v == null || v.isBlank()) {
            return OFF;
        }
        try {
            return valueOf(v.trim().toUpperCase(Locale.ROOT));
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(ENV + "=" + v + " is not a debug level: use OFF, INFO or DETAIL");
        }
    }

    /** True when this level includes {@code other}. */
    public boolean includes(DebugLevel other) {
        return compareTo(other) >= 0;
    }
}
