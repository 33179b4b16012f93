package io.tensorbus.backend.tcp;

import io.netty.buffer.ByteBuf;
import io.netty.channel.EventLoop;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import java.lang.foreign.MemorySegment;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Predicate;

/**
 * A connection's frames through a {@link SharedMemoryChannel} instead of its socket: writes copy header and
 * payload into the outgoing ring, and the incoming ring's bytes go to a {@link FrameReader} in place, so a
 * reducing receive combines straight out of the peer's ring into its accumulator. The socket stays open as the
 * doorbell and as the sign of life: its closing still means the peer is gone.
 *
 * <p>Polling runs on the group's event loop as tasks that queue themselves again, so the loop keeps serving its
 * sockets and timers while it spins. After a while without progress ({@link SharedMemoryOptions}: longer while an
 * operation waits for data) the link sleeps: it sets the
 * ring's flag and lets the loop block, and the peer rings (a frame on the socket) when it next writes or frees
 * room. A burst of small messages thus crosses without a system call, and an idle group takes no core.
 */
final class SharedMemoryLink {
    /**
     * The most bytes read from the ring before freeing them: the producer refills behind the reader while it
     * reduces, and the reductions run as many short calls (compiled as such) rather than a few long loops.
     */
    static final long DRAIN_PIECE_BYTES = 256 * 1024;
    /** After this long without progress a spinning link yields its core between polls, in nanoseconds. */
    static final long YIELD_AFTER_NANOS = 20_000;
    /** How often a sleeping link looks at its rings while an operation of its group waits, in milliseconds. */
    static final long CHECK_MILLIS = 10;
    private final SharedMemoryChannel channel;
    private final FrameReader reader;
    private final EventLoop loop;
    private final Runnable ringDoorbell;
    private final long spinNanos;
    private final long waitSpinNanos;
    private final java.util.function.BooleanSupplier waiting;
    private final ArrayDeque<Write> queue = new ArrayDeque<>();
    private final Runnable pollTask = this::scheduledPoll;
    private final Runnable checkTask = () -> {
        checkPending = false;
        poll();
    };
    private boolean checkPending;
    private long lastProgress;
    private boolean scheduled;
    private boolean polling;
    private boolean again;
    private volatile boolean closed;
    /**
     * Guards the producer side (the queue, the outgoing ring's writes, closing): the event loop pumps, and a
     * caller's thread may write a whole frame itself ({@link #tryWriteNow}).
     */
    private final ReentrantLock producer = new ReentrantLock();
    private final Predicate<Runnable> guarded;

    /** One frame on its way into the ring. */
    private static final class Write {
        final MemorySegment header;
        final MemorySegment payload;
        final Promise<Void> done = Promise.promise();
        long written;

        Write(MemorySegment header, MemorySegment payload) {
            this.header = header;
            this.payload = payload;
        }

        long size() {
            return header.byteSize() + (payload == null ? 0 : payload.byteSize());
        }
    }

    /**
     * A link over {@code channel} whose incoming frames go to {@code reader}; {@code ringDoorbell} sends the
     * peer a doorbell frame over the socket; {@code waiting} says whether an operation of the group waits for
     * data (the link then polls for longer before it sleeps); {@code guarded} runs each step of the reader with
     * the connection's malformed-frame handling and returns false when the connection was lost meanwhile.
     */
    SharedMemoryLink(SharedMemoryChannel channel, FrameReader reader, EventLoop loop, Runnable ringDoorbell,
                     SharedMemoryOptions options, java.util.function.BooleanSupplier waiting,
                     Predicate<Runnable> guarded) {
        this.channel = channel;
        this.reader = reader;
        this.loop = loop;
        this.ringDoorbell = ringDoorbell;
        this.spinNanos = options.spinNanos();
        this.waitSpinNanos = options.waitSpinNanos();
        this.waiting = waiting;
        this.guarded = guarded;
    }

    FrameReader reader() {
        return reader;
    }

    /** Queues a header and its payload; completes once every byte is in the ring. Event loop only. */
    Future<Void> write(Frame header, MemorySegment payload) {
        assert loop.inEventLoop() : "a shared-memory link written on " + Thread.currentThread().getName();
        if (closed) {
            return Future.failedFuture(new java.io.IOException("the shared-memory channel is closed"));
        }
        if (payload != null && !payload.isAccessibleBy(Thread.currentThread())) {
            return Future.failedFuture(new IllegalArgumentException("a payload confined to another thread cannot be"
                    + " sent from the group's event loop: allocate it from a shared or automatic arena"));
        }
        Write w = new Write(headerBytes(header), payload == null || payload.byteSize() == 0 ? null : payload);
        producer.lock();
        try {
            queue.addLast(w);
        } finally {
            producer.unlock();
        }
        poll();
        return w.done.future();
    }

    private static MemorySegment headerBytes(Frame header) {
        ByteBuf h = header.encode();
        MemorySegment bytes = MemorySegment.ofArray(new byte[Frame.HEADER_BYTES]);
        MemorySegment.copy(MemorySegment.ofBuffer(h.nioBuffer()), 0, bytes, 0, Frame.HEADER_BYTES);
        h.release();
        return bytes;
    }

    /**
     * Writes a whole frame into the ring now, on the calling thread, when nothing is queued before it and it
     * fits: a small message then leaves without a hand-off to the event loop. Returns false (nothing written)
     * otherwise; the caller then goes the queued way. Any thread.
     */
    boolean tryWriteNow(Frame header, MemorySegment payload) {
        long size = Frame.HEADER_BYTES + (payload == null ? 0 : payload.byteSize());
        SharedMemoryRing out = channel.outgoing();
        boolean ring;
        producer.lock();
        try {
            if (closed || !queue.isEmpty() || out.writable() < size) {
                return false;
            }
            MemorySegment h = headerBytes(header);
            out.offer(h, 0, h.byteSize(), 0);
            if (payload != null && payload.byteSize() > 0) {
                out.offer(payload, 0, payload.byteSize(), h.byteSize());
            }
            ring = out.publish(size);
        } finally {
            producer.unlock();
        }
        if (ring) {
            ringDoorbell.run();
        }
        return true;
    }

    /** A doorbell arrived, or the reader may go on (its parked payload found a receive): poll now. */
    void wake() {
        poll();
    }

    /** An operation started waiting for data: poll from now on, whenever the last progress was. */
    void expect() {
        lastProgress = System.nanoTime();
        poll();
    }

    /**
     * Moves what it can: incoming frames to the reader (unless a payload is parked), queued frames into the
     * outgoing ring; then spins or sleeps. Event loop only.
     */
    void poll() {
        assert loop.inEventLoop() : "a shared-memory link polled on " + Thread.currentThread().getName();
        if (closed) {
            return;
        }
        if (polling) {
            // A frame's completion wrote or posted more while this link was reading: go round once more.
            again = true;
            return;
        }
        polling = true;
        List<Promise<Void>> written = new ArrayList<>();
        try {
            do {
                again = false;
                boolean progress = pump(written) | drain();
                if (progress) {
                    lastProgress = System.nanoTime();
                }
            } while (again && !closed);
        } finally {
            polling = false;
            if (closed) {
                // Closed by a frame's handler while this poll still read the ring: unmap only now.
                channel.close();
            }
        }
        written.forEach(Promise::tryComplete);
        if (!closed) {
            scheduleOrSleep();
        }
    }


    /** Hands readable bytes to the reader until the ring is empty or a payload parks; true on progress. */
    private boolean drain() {
        SharedMemoryRing in = channel.incoming();
        boolean progress = false;
        while (!closed && !reader.isParked() && in.readable() > 0) {
            MemorySegment slice = in.readableSlice();
            if (slice.byteSize() > DRAIN_PIECE_BYTES) {
                slice = slice.asSlice(0, DRAIN_PIECE_BYTES);
            }
            MemorySegment piece = slice;
            long[] used = new long[1];
            if (!guarded.test(() -> used[0] = reader.consume(piece))) {
                return true;
            }
            if (used[0] == 0) {
                break;
            }
            progress = true;
            if (!closed && in.release(used[0])) {
                ringDoorbell.run();
            }
        }
        return progress;
    }

    /**
     * Copies queued frames into the outgoing ring as room allows; true on progress. A payload that cannot be
     * read here (its arena closed, or confined to another thread) fails its own write when none of its bytes
     * were published yet, and loses the peer when some were (the stream would be cut mid-frame).
     */
    private boolean pump(List<Promise<Void>> written) {
        SharedMemoryRing out = channel.outgoing();
        long moved = 0;
        boolean ring = false;
        List<Map.Entry<Write, RuntimeException>> failed = new ArrayList<>();
        RuntimeException cut = null;
        producer.lock();
        try {
            while (!queue.isEmpty()) {
                Write w = queue.peekFirst();
                long before = w.written;
                try {
                    moved += copy(out, w, moved);
                } catch (RuntimeException e) {
                    queue.pollFirst();
                    failed.add(Map.entry(w, e));
                    if (before > 0) {
                        cut = e;
                        break;
                    }
                    continue; // what was copied of it is not published and will be overwritten
                }
                if (w.written < w.size()) {
                    break;
                }
                queue.pollFirst();
                written.add(w.done);
            }
            ring = moved > 0 && out.publish(moved);
        } finally {
            producer.unlock();
        }
        if (ring) {
            ringDoorbell.run();
        }
        failed.forEach(f -> f.getKey().done.tryFail(f.getValue()));
        if (cut != null) {
            RuntimeException e = cut;
            guarded.test(() -> {
                throw new IllegalStateException("a payload became unreadable in the middle of its frame: " + e, e);
            });
        }
        return moved > 0;
    }

    private static long copy(SharedMemoryRing out, Write w, long unpublished) {
        long before = w.written;
        long h = w.header.byteSize();
        if (w.written < h) {
            w.written += out.offer(w.header, w.written, h - w.written, unpublished);
        }
        if (w.written >= h && w.payload != null) {
            long at = w.written - h;
            w.written += out.offer(w.payload, at, w.payload.byteSize() - at, unpublished + (w.written - before));
        }
        return w.written - before;
    }

    private void scheduledPoll() {
        scheduled = false;
        if (System.nanoTime() - lastProgress > YIELD_AFTER_NANOS) {
            // Spinning without progress: let the threads that would make some (the caller about to issue the
            // next operation, the peer on a shared core) run first; without this, two spinning links on two
            // cores starved their own callers for a scheduler slice (3 ms round trips).
            Thread.yield();
        }
        poll();
    }

    private void scheduleOrSleep() {
        if (scheduled) {
            return;
        }
        long budget = waiting.getAsBoolean() ? waitSpinNanos : spinNanos;
        if (System.nanoTime() - lastProgress < budget || !mayRest()) {
            scheduled = true;
            channel.incoming().awake();
            loop.execute(pollTask);
        } else if (waiting.getAsBoolean() && !checkPending) {
            // Asleep while an operation waits: look again now and then, so that a doorbell lost on its way (a
            // peer that died between writing and ringing is reported by its socket) costs a delay, not a hang.
            checkPending = true;
            loop.schedule(checkTask, CHECK_MILLIS, java.util.concurrent.TimeUnit.MILLISECONDS);
        }
    }

    /** Sets the sleep flags the peer checks; false when data or room arrived meanwhile (poll on instead). */
    private boolean mayRest() {
        if (!reader.isParked() && !channel.incoming().sleep()) {
            lastProgress = System.nanoTime();
            return false;
        }
        if (hasQueued() && !channel.outgoing().waitForRoom()) {
            lastProgress = System.nanoTime();
            return false;
        }
        return true;
    }

    /**
     * What this link holds, for a stall report: bytes the peer wrote that this side has not read, bytes this
     * side wrote that the peer has not read, frames waiting for room, and whether a payload waits for its
     * receive; null when it holds nothing.
     */
    String state() {
        if (closed) {
            return null;
        }
        long unread = channel.incoming().readable();
        long unreadByPeer = channel.outgoing().readable();
        int queued;
        producer.lock();
        try {
            queued = queue.size();
        } finally {
            producer.unlock();
        }
        if (unread == 0 && unreadByPeer == 0 && queued == 0 && !reader.isParked()) {
            return null;
        }
        return unread + " bytes from it unread here" + (reader.isParked() ? " (a payload waits for its receive)" : "")
                + ", " + unreadByPeer + " bytes to it unread there, " + queued + " frames waiting for room";
    }

    private boolean hasQueued() {
        producer.lock();
        try {
            return !queue.isEmpty();
        } finally {
            producer.unlock();
        }
    }

    /** Fails what is still queued and unmaps the rings. Event loop only. */
    void close(Throwable cause) {
        List<Write> failed = new ArrayList<>();
        producer.lock();
        try {
            if (closed) {
                return;
            }
            // Under the lock: a caller's tryWriteNow either finished or sees the link closed.
            closed = true;
            failed.addAll(queue);
            queue.clear();
        } finally {
            producer.unlock();
        }
        failed.forEach(w -> w.done.tryFail(cause));
        if (!polling) {
            channel.close();
        }
    }
}
