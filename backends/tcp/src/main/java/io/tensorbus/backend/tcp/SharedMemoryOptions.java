package io.tensorbus.backend.tcp;

import io.tensorbus.spi.BackendOptions;
import io.tensorbus.spi.support.shm.SharedMemoryChannel;
import io.tensorbus.spi.support.shm.SharedMemoryLink;
import java.nio.file.Path;

/**
 * How a group uses shared memory between its ranks on one host, from the backend's settings (each defaults to
 * the system property of the same name with a {@code tensorbus.} prefix, then to the value given here):
 * {@code tcp.sharedMemory} ({@code true} by default),
 * {@code tcp.sharedMemoryDir} (a tmpfs, {@code /dev/shm} by default), {@code tcp.sharedMemoryRingBytes} (each
 * direction's ring, a power of two from 64 KiB to 1 GiB, 4 MiB by default) and
 * {@code tcp.sharedMemorySpinMicros} (how long a link polls after its last progress before it sleeps, 50 by
 * default) and {@code tcp.sharedMemoryWaitSpinMicros} (the same while an operation of the group waits for data,
 * 1000 by default: a peer's answer then arrives without a doorbell's system calls and wake-up);
 * {@code tcp.sharedMemoryAllReduce} ({@code true} by default: a group whose members all share one host
 * all-reduces host buffers through an area they all map, {@link SharedMemoryCollectives}) and
 * {@code tcp.sharedMemorySliceBytes} (the size of each member's two buffers there, a multiple of 4 KiB from 4 KiB
 * to 256 MiB, 4 MiB by default: fewer, larger slices pass fewer barriers) and {@code tcp.sharedMemoryInProcess}
 * ({@code true} by default: members that are all threads of one process all-reduce straight between their
 * buffers, without the area's).
 *
 * @param dir where channel files are made
 * @param ringBytes the capacity of each ring, in bytes
 * @param spinNanos how long a link polls without progress before it sleeps, in nanoseconds
 * @param waitSpinNanos the same while an operation waits for data, in nanoseconds
 * @param hostIdentity this host's {@link SharedMemoryChannel#hostIdentity}
 * @param allReduce whether the group may all-reduce through a shared area
 * @param sliceBytes the size of each member's buffers in that area, in bytes
 * @param inProcess whether members that are all threads of one process all-reduce straight between their buffers
 */
record SharedMemoryOptions(Path dir, long ringBytes, long spinNanos, long waitSpinNanos, String hostIdentity,
                           boolean allReduce, long sliceBytes, boolean inProcess) {
    static final long MIN_RING_BYTES = 64 * 1024;
    static final long MAX_RING_BYTES = 1L << 30;
    static final long MAX_SLICE_BYTES = 256L << 20;

    /** How the group's links poll before they sleep. */
    SharedMemoryLink.Polling polling() {
        return new SharedMemoryLink.Polling(spinNanos, waitSpinNanos);
    }

    /**
     * The group's settings, or null when shared memory is off or this host has none usable.
     *
     * @throws IllegalArgumentException when a setting is malformed or out of range
     */
    static SharedMemoryOptions of(BackendOptions options) {
        boolean enabled = flag(options, "tcp.sharedMemory");
        boolean allReduce = flag(options, "tcp.sharedMemoryAllReduce");
        boolean inProcess = flag(options, "tcp.sharedMemoryInProcess");
        long sliceBytes = number(options, "tcp.sharedMemorySliceBytes", 4 << 20);
        if (sliceBytes % 4096 != 0 || sliceBytes < 4096 || sliceBytes > MAX_SLICE_BYTES) {
            throw new IllegalArgumentException("tcp.sharedMemorySliceBytes=" + sliceBytes
                    + ": expected a multiple of 4096 from 4096 to " + MAX_SLICE_BYTES);
        }
        long ringBytes = number(options, "tcp.sharedMemoryRingBytes", 4 << 20);
        if (Long.bitCount(ringBytes) != 1 || ringBytes < MIN_RING_BYTES || ringBytes > MAX_RING_BYTES) {
            throw new IllegalArgumentException("tcp.sharedMemoryRingBytes=" + ringBytes
                    + ": expected a power of two from " + MIN_RING_BYTES + " to " + MAX_RING_BYTES);
        }
        long spinMicros = micros(options, "tcp.sharedMemorySpinMicros", 50);
        long waitSpinMicros = micros(options, "tcp.sharedMemoryWaitSpinMicros", 1000);
        if (!enabled) {
            return null;
        }
        Path dir = Path.of(setting(options, "tcp.sharedMemoryDir", "/dev/shm"));
        String host = SharedMemoryChannel.hostIdentity(dir);
        return host == null ? null : new SharedMemoryOptions(dir, ringBytes, spinMicros * 1000, waitSpinMicros * 1000,
                host, allReduce, sliceBytes, inProcess);
    }

    private static boolean flag(BackendOptions options, String key) {
        String value = setting(options, key, "true");
        if (!value.equals("true") && !value.equals("false")) {
            throw new IllegalArgumentException(key + "=" + value + ": expected true or false");
        }
        return value.equals("true");
    }

    private static long micros(BackendOptions options, String key, long defaultValue) {
        long micros = number(options, key, defaultValue);
        if (micros < 0 || micros > 1_000_000) {
            throw new IllegalArgumentException(key + "=" + micros + ": expected 0 to 1000000");
        }
        return micros;
    }

    private static String setting(BackendOptions options, String key, String defaultValue) {
        return options.property(key, System.getProperty("tensorbus." + key, defaultValue));
    }

    private static long number(BackendOptions options, String key, long defaultValue) {
        String text = setting(options, key, String.valueOf(defaultValue));
        try {
            return Long.parseLong(text.trim());
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(key + "=" + text + ": expected a whole number");
        }
    }
}
