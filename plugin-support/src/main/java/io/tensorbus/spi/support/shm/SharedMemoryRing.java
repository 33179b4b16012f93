package io.tensorbus.spi.support.shm;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.VarHandle;

/**
 * A single-producer, single-consumer byte ring in memory that two processes map: the producer copies bytes in
 * and publishes them by moving {@code head}, the consumer reads them in place and frees them by moving
 * {@code tail}. Both counters only grow (a byte's place is its position modulo the capacity, a power of two),
 * each sits on its own cache line, and each is written by one side only.
 *
 * <p>Two flags let either side stop polling without missing the other: the consumer sets {@code sleeping}
 * before it stops and checks once more for data; the producer reads it after publishing and, finding it set,
 * clears it and rings the doorbell (a frame on the pair's socket). {@code waiting} is the same for a producer
 * that found the ring full. Volatile accesses order each flag against the counter on the other side, so one of
 * the two always sees the other (Dekker's pattern).
 */
public final class SharedMemoryRing {
    /** Bytes of a ring's control block: four cache lines (head, tail, sleeping, waiting). */
    public static final long CONTROL_BYTES = 4 * 64;
    private static final long HEAD = 0;
    private static final long TAIL = 64;
    private static final long SLEEPING = 128;
    private static final long WAITING = 192;
    private static final VarHandle LONG = ValueLayout.JAVA_LONG.varHandle();

    private final MemorySegment control;
    private final MemorySegment data;
    private final long capacity;
    private final long mask;

    /** A ring whose counters live in {@code control} ({@link #CONTROL_BYTES}) and bytes in {@code data}. */
    public SharedMemoryRing(MemorySegment control, MemorySegment data) {
        if (Long.bitCount(data.byteSize()) != 1) {
            throw new IllegalArgumentException("ring capacity " + data.byteSize() + " is not a power of two");
        }
        this.control = control;
        this.data = data;
        this.capacity = data.byteSize();
        this.mask = capacity - 1;
    }

    public long capacity() {
        return capacity;
    }

    private long head() {
        return (long) LONG.getVolatile(control, HEAD);
    }

    private long tail() {
        return (long) LONG.getVolatile(control, TAIL);
    }

    // ---- producer side --------------------------------------------------------------------------------

    /** How many bytes the producer may write now. */
    public long writable() {
        return capacity - (head() - tail());
    }

    /**
     * Copies up to {@code length} bytes of {@code src} from {@code offset} in, without publishing them; returns
     * how many fit. {@link #publish} makes them (and earlier unpublished ones) visible.
     */
    public long offer(MemorySegment src, long offset, long length, long unpublished) {
        long head = head() + unpublished;
        long n = Math.min(length, capacity - (head - tail()));
        long at = head & mask;
        long first = Math.min(n, capacity - at);
        MemorySegment.copy(src, offset, data, at, first);
        if (n > first) {
            MemorySegment.copy(src, offset + first, data, 0, n - first);
        }
        return n;
    }

    /**
     * Publishes {@code bytes} written by {@link #offer}; returns true when the consumer was asleep and must be woken.
     */
    public boolean publish(long bytes) {
        LONG.setVolatile(control, HEAD, head() + bytes);
        return wake(SLEEPING);
    }

    /** The producer stops polling for room; returns false (and stays awake) when room appeared meanwhile. */
    public boolean waitForRoom() {
        LONG.setVolatile(control, WAITING, 1L);
        if (writable() > 0) {
            LONG.setVolatile(control, WAITING, 0L);
            return false;
        }
        return true;
    }

    // ---- consumer side --------------------------------------------------------------------------------

    /** How many published bytes the consumer has not read. */
    public long readable() {
        return head() - tail();
    }

    /**
     * The readable bytes from the consumer's position to the end of the ring's memory or of the data: the
     * first part of what {@link #readable} counts (call again after {@link #release} for the wrapped rest).
     */
    public MemorySegment readableSlice() {
        long tail = tail();
        long n = head() - tail;
        long at = tail & mask;
        return data.asSlice(at, Math.min(n, capacity - at));
    }

    /**
     * Copies readable bytes, from {@code skip} bytes past the consumer's position on, into the whole of
     * {@code dst} (across the ring's end where they wrap), without freeing them.
     *
     * @throws IndexOutOfBoundsException when fewer than {@code skip + dst.byteSize()} bytes are readable
     */
    public void copyOut(long skip, MemorySegment dst) {
        long n = dst.byteSize();
        if (skip < 0 || skip + n > readable()) {
            throw new IndexOutOfBoundsException("bytes " + skip + " to " + (skip + n) + " of " + readable()
                    + " readable");
        }
        long at = (tail() + skip) & mask;
        long first = Math.min(n, capacity - at);
        MemorySegment.copy(data, at, dst, 0, first);
        if (n > first) {
            MemorySegment.copy(data, 0, dst, first, n - first);
        }
    }

    /** Frees {@code bytes} read bytes; returns true when the producer waits for room and must be woken. */
    public boolean release(long bytes) {
        LONG.setVolatile(control, TAIL, tail() + bytes);
        return wake(WAITING);
    }

    /** The consumer stops polling; returns false (and stays awake) when data arrived meanwhile. */
    public boolean sleep() {
        LONG.setVolatile(control, SLEEPING, 1L);
        if (readable() > 0) {
            LONG.setVolatile(control, SLEEPING, 0L);
            return false;
        }
        return true;
    }

    /** The consumer polls again: the producer need not ring. */
    public void awake() {
        if ((long) LONG.getVolatile(control, SLEEPING) != 0) {
            LONG.setVolatile(control, SLEEPING, 0L);
        }
    }

    /** Clears {@code flag} when it is set; true when this call cleared it (so exactly one side rings). */
    private boolean wake(long flag) {
        return (long) LONG.getVolatile(control, flag) != 0 && LONG.compareAndSet(control, flag, 1L, 0L);
    }
}
