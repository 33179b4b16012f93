package io.tensorbus.backend.tcp;

import io.tensorbus.spi.BackendOptions;
import java.nio.file.Path;

/**
 * How a group uses shared memory between its ranks on one host, from the backend's settings:
 * {@code tcp.sharedMemory} ({@code true} by default, or the system property {@code tensorbus.tcp.sharedMemory}),
 * {@code tcp.sharedMemoryDir} (a tmpfs, {@code /dev/shm} by default), {@code tcp.sharedMemoryRingBytes} (each
 * direction's ring, a power of two from 64 KiB to 1 GiB, 4 MiB by default) and
 * {@code tcp.sharedMemorySpinMicros} (how long an idle link polls before it sleeps, 50 by default).
 *
 * @param dir where channel files are made
 * @param ringBytes the capacity of each ring, in bytes
 * @param spinNanos how long a link polls without progress before it sleeps, in nanoseconds
 * @param hostIdentity this host's {@link SharedMemoryChannel#hostIdentity}
 */
record SharedMemoryOptions(Path dir, long ringBytes, long spinNanos, String hostIdentity) {
    static final long MIN_RING_BYTES = 64 * 1024;
    static final long MAX_RING_BYTES = 1L << 30;

    /**
     * The group's settings, or null when shared memory is off or this host has none usable.
     *
     * @throws IllegalArgumentException when a setting is malformed or out of range
     */
    static SharedMemoryOptions of(BackendOptions options) {
        String enabled = options.property("tcp.sharedMemory",
                System.getProperty("tensorbus.tcp.sharedMemory", "true"));
        if (!enabled.equals("true") && !enabled.equals("false")) {
            throw new IllegalArgumentException("tcp.sharedMemory=" + enabled + ": expected true or false");
        }
        long ringBytes = number(options, "tcp.sharedMemoryRingBytes", 4 << 20);
        if (Long.bitCount(ringBytes) != 1 || ringBytes < MIN_RING_BYTES || ringBytes > MAX_RING_BYTES) {
            throw new IllegalArgumentException("tcp.sharedMemoryRingBytes=" + ringBytes
                    + ": expected a power of two from " + MIN_RING_BYTES + " to " + MAX_RING_BYTES);
        }
        long spinMicros = number(options, "tcp.sharedMemorySpinMicros", 50);
        if (spinMicros < 0 || spinMicros > 1_000_000) {
            throw new IllegalArgumentException("tcp.sharedMemorySpinMicros=" + spinMicros
                    + ": expected 0 to 1000000");
        }
        if (enabled.equals("false")) {
            return null;
        }
        Path dir = Path.of(options.property("tcp.sharedMemoryDir", "/dev/shm"));
        String host = SharedMemoryChannel.hostIdentity(dir);
        return host == null ? null : new SharedMemoryOptions(dir, ringBytes, spinMicros * 1000, host);
    }

    private static long number(BackendOptions options, String key, long defaultValue) {
        String text = options.property(key, String.valueOf(defaultValue));
        try {
            return Long.parseLong(text.trim());
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(key + "=" + text + ": expected a whole number");
        }
    }
}
