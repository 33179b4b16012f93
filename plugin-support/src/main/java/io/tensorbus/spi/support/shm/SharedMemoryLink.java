package io.tensorbus.spi.support.shm;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.util.concurrent.EventExecutor;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.BooleanSupplier;
import java.util.function.Predicate;

/**
 * A connection's frames through a {@link SharedMemoryChannel} instead of its socket: writes copy a frame's parts
 * (header, body, payload) into the outgoing ring, and the incoming ring's bytes go to a {@link Reader} in place,
 * so that a reducing receive combines straight out of the peer's ring into its accumulator. The socket stays
 * open as the doorbell and as the sign of life: its closing still means the peer is gone.
 *
 * <p>Polling runs on the connection's event loop as tasks that schedule themselves again, so the loop keeps
 * serving its sockets and timers between polls while it spins. After a while without progress ({@link Polling}: longer
 * while an operation waits for data) the link sleeps: it sets the ring's flag and lets the loop block, and the peer
 * rings (a frame on the socket) when it next writes or frees room. A burst of small messages thus crosses without a
 * system call, and an idle connection takes no core.
 */
public final class SharedMemoryLink {
    /**
     * The most bytes read from the ring before freeing them: the producer refills behind the reader while it
     * reduces, and the reductions run as many short calls (compiled as such) rather than a few long loops.
     */
    public static final long DRAIN_PIECE_BYTES = 256 * 1024;
    /**
     * After this long without progress a spinning link yields its core between polls, in nanoseconds, unless its
     * {@link Polling} says otherwise; a writer waiting for room always does.
     */
    public static final long YIELD_AFTER_NANOS = 20_000;
    /** How often a sleeping link looks at its rings while an operation waits, in milliseconds. */
    static final long CHECK_MILLIS = 10;

    /** Where the incoming bytes go: a connection's frame parser. Called on the link's event loop only. */
    public interface Reader {
        /**
         * Takes what it can of {@code bytes} (read in place: they are freed once this returns) and returns how
         * many it took; fewer than offered only when a payload parks.
         */
        long consume(MemorySegment bytes);

        /** True while a payload waits for a receive: the link then reads nothing more. */
        boolean isParked();

        /**
         * True when the next byte starts a frame (no frame half read, none parked): only then may a caller's
         * thread take a frame itself ({@link #pollOnCallerThread}). A reader that cannot tell says false.
         */
        default boolean betweenFrames() {
            return false;
        }
    }

    /**
     * What a caller's thread makes of the next incoming frame ({@link #pollOnCallerThread}): given the frame's
     * first bytes, the memory its remaining bytes go to (exactly as many as the frame has left), or null to
     * leave the frame to the event loop. It must not change anything: the frame may not be whole yet, and is
     * then offered again.
     */
    public interface Taker {
        MemorySegment target(MemorySegment header);
    }

    /**
     * How long a link polls after its last progress before it sleeps, in nanoseconds: {@code spinNanos} when
     * idle, {@code waitSpinNanos} while an operation waits for data (a peer's answer then arrives without a
     * doorbell's system calls and wake-up); and after how long without progress each poll first yields its core
     * ({@code yieldAfterNanos}), so that the threads that would make progress (the peer, the caller about to issue
     * the next operation) run first on a machine with few cores.
     */
    public record Polling(long spinNanos, long waitSpinNanos, long yieldAfterNanos) {
        /**
         * @throws IllegalArgumentException when any is negative
         */
        public Polling {
            if (spinNanos < 0 || waitSpinNanos < 0 || yieldAfterNanos < 0) {
                throw new IllegalArgumentException("spin times must not be negative: " + spinNanos + ", "
                        + waitSpinNanos + ", " + yieldAfterNanos);
            }
        }

        /** Polling that yields after {@value SharedMemoryLink#YIELD_AFTER_NANOS} ns without progress. */
        public Polling(long spinNanos, long waitSpinNanos) {
            this(spinNanos, waitSpinNanos, YIELD_AFTER_NANOS);
        }
    }

    private final SharedMemoryChannel channel;
    private final Reader reader;
    private final EventExecutor loop;
    private final Runnable ringDoorbell;
    private final long spinNanos;
    private final long waitSpinNanos;
    private final long yieldAfterNanos;
    private final BooleanSupplier waiting;
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
     * caller's thread may write a whole frame itself ({@link #tryWriteNow}, {@link #writeOrCopy}).
     */
    private final ReentrantLock producer = new ReentrantLock();
    /**
     * Guards the consumer side (the incoming ring, the reader's state between frames, unmapping): the event loop
     * drains, and a caller's thread may take a frame itself ({@link #pollOnCallerThread}).
     */
    private final ReentrantLock consumer = new ReentrantLock();
    /** Callers' threads polling the incoming ring now: the event loop may sleep without the peer ringing. */
    private final AtomicInteger callersPolling = new AtomicInteger();
    private final AtomicLong fullCount = new AtomicLong();
    private final AtomicLong fullNanos = new AtomicLong();
    private final Predicate<Runnable> guarded;

    /** One frame on its way into the ring; {@code owned} (a copy of the frame's rest) is released once written. */
    private static final class Write {
        final MemorySegment[] parts;
        final long size;
        final ByteBuf owned;
        final Promise<Void> done = Promise.promise();
        long written;
        /** Since when it has waited for room in the ring (0: it has not), under the producer lock. */
        long fullSince;

        Write(MemorySegment[] parts, ByteBuf owned) {
            this.parts = parts;
            this.owned = owned;
            long n = 0;
            for (MemorySegment p : parts) {
                n += p.byteSize();
            }
            this.size = n;
        }

        void finish(Throwable failure) {
            if (owned != null) {
                owned.release();
            }
            if (failure == null) {
                done.tryComplete();
            } else {
                done.tryFail(failure);
            }
        }
    }

    /**
     * A link over {@code channel} whose incoming bytes go to {@code reader}, polled on {@code loop} (the
     * connection's event loop); {@code ringDoorbell} sends the peer a doorbell frame over the socket;
     * {@code waiting} says whether an operation waits for data (the link then polls for longer before it
     * sleeps); {@code guarded} runs each step of the reader with the connection's malformed-frame handling and
     * returns false when the connection was lost meanwhile.
     */
    public SharedMemoryLink(SharedMemoryChannel channel, Reader reader, EventExecutor loop, Runnable ringDoorbell,
                            Polling polling, BooleanSupplier waiting, Predicate<Runnable> guarded) {
        this.channel = channel;
        this.reader = reader;
        this.loop = loop;
        this.ringDoorbell = ringDoorbell;
        this.spinNanos = polling.spinNanos();
        this.waitSpinNanos = polling.waitSpinNanos();
        this.yieldAfterNanos = polling.yieldAfterNanos();
        this.waiting = waiting;
        this.guarded = guarded;
    }

    /**
     * Queues a frame of {@code parts}, read when room appears: they must stay unchanged and readable from the
     * event loop until the future completes, once every byte is in the ring. Event loop only.
     */
    public Future<Void> write(MemorySegment... parts) {
        assert loop.inEventLoop() : "a shared-memory link written on " + Thread.currentThread().getName();
        if (closed) {
            return Future.failedFuture(new IOException("the shared-memory channel is closed"));
        }
        for (MemorySegment p : parts) {
            if (!p.isAccessibleBy(Thread.currentThread())) {
                return Future.failedFuture(new IllegalArgumentException("a payload confined to another thread "
                        + "cannot be sent from the connection's event loop: allocate it from a shared or automatic"
                        + " arena"));
            }
        }
        Write w = new Write(parts, null);
        producer.lock();
        try {
            queue.addLast(w);
        } finally {
            producer.unlock();
        }
        poll();
        return w.done.future();
    }

    /**
     * Writes a whole frame of {@code parts} into the ring now, on the calling thread, when nothing is queued
     * before it and it fits: a small message then leaves without a hand-off to the event loop. Returns false
     * (nothing written) otherwise; the caller then goes the queued way. Any thread.
     */
    public boolean tryWriteNow(MemorySegment... parts) {
        long size = 0;
        for (MemorySegment p : parts) {
            size += p.byteSize();
        }
        SharedMemoryRing out = channel.outgoing();
        boolean ring;
        producer.lock();
        try {
            if (closed || !queue.isEmpty() || out.writable() < size) {
                return false;
            }
            long at = 0;
            for (MemorySegment p : parts) {
                at += out.offer(p, 0, p.byteSize(), at);
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

    /**
     * Sends a frame of {@code parts} as if it were copied now: what fits goes into the ring on the calling
     * thread, published as it goes so that the peer reads while this thread writes; when the ring is full this
     * thread waits for room for up to {@code patienceNanos} without progress (0 on an event loop, which must not
     * wait), and the rest is then copied into memory of the link's own and written from the event loop as room
     * appears. The caller may change the parts' memory as soon as this returns. Any thread.
     *
     * @return completes once every byte is in the ring; fails when the link closed first
     */
    public Future<Void> writeOrCopy(long patienceNanos, MemorySegment... parts) {
        Write rest = null;
        producer.lock();
        try {
            if (closed) {
                return Future.failedFuture(new IOException("the shared-memory channel is closed"));
            }
            long[] cursor = {0, 0}; // part, offset within it
            long fullSince = queue.isEmpty() ? writeWhileRoom(parts, cursor, patienceNanos) : 0;
            if (cursor[0] < parts.length) {
                rest = copyOf(parts, (int) cursor[0], cursor[1]);
                rest.fullSince = fullSince;
                queue.addLast(rest);
            }
        } finally {
            producer.unlock();
        }
        if (rest == null) {
            return Future.succeededFuture();
        }
        loop.execute(this::poll);
        return rest.done.future();
    }

    /**
     * Writes and publishes {@code parts} from {@code cursor} on as room appears, until all are in or no room
     * appeared for {@code patienceNanos}; moves the cursor. Holds the producer lock.
     *
     * @return since when the frame has waited for room, when it gave up waiting (0 when all went in)
     */
    private long writeWhileRoom(MemorySegment[] parts, long[] cursor, long patienceNanos) {
        SharedMemoryRing out = channel.outgoing();
        long lastProgress = System.nanoTime();
        long fullSince = 0;
        while (cursor[0] < parts.length) {
            long n = offer(out, parts, cursor);
            long now = System.nanoTime();
            if (n > 0) {
                lastProgress = now;
                if (out.publish(n)) {
                    ringDoorbell.run();
                }
                if (cursor[0] == parts.length) {
                    roomFound(fullSince);
                }
                continue;
            }
            fullSince = ringFull(fullSince);
            if (now - lastProgress >= patienceNanos) {
                return fullSince;
            } else if (now - lastProgress > YIELD_AFTER_NANOS) {
                Thread.yield();
            } else {
                Thread.onSpinWait();
            }
        }
        return 0;
    }

    /** Offers {@code parts} from {@code cursor} on to {@code out} until it is full; moves the cursor, answers bytes. */
    private static long offer(SharedMemoryRing out, MemorySegment[] parts, long[] cursor) {
        long n = 0;
        while (cursor[0] < parts.length) {
            MemorySegment p = parts[(int) cursor[0]];
            long m = out.offer(p, cursor[1], p.byteSize() - cursor[1], n);
            n += m;
            cursor[1] += m;
            if (cursor[1] < p.byteSize()) {
                break;
            }
            cursor[0]++;
            cursor[1] = 0;
        }
        return n;
    }

    /** A frame found the ring full: counts its wait for room once, from now; answers since when it waits. */
    private long ringFull(long fullSince) {
        if (fullSince != 0) {
            return fullSince;
        }
        fullCount.incrementAndGet();
        return System.nanoTime();
    }

    /** A frame that waited for room since {@code fullSince} (0: it did not) is in the ring: its wait is counted. */
    private void roomFound(long fullSince) {
        if (fullSince != 0) {
            fullNanos.addAndGet(System.nanoTime() - fullSince);
        }
    }

    /** A write of the bytes of {@code parts} from part {@code first}, byte {@code offset} on, copied now. */
    private static Write copyOf(MemorySegment[] parts, int first, long offset) {
        long size = -offset;
        for (int i = first; i < parts.length; i++) {
            size += parts[i].byteSize();
        }
        if (size > Integer.MAX_VALUE - 8) {
            throw new IllegalArgumentException("a frame of " + size + " bytes is larger than 2 GiB");
        }
        ByteBuf owned = ByteBufAllocator.DEFAULT.directBuffer((int) size);
        MemorySegment copy = MemorySegment.ofBuffer(owned.nioBuffer(0, (int) size));
        long at = 0;
        for (int i = first; i < parts.length; i++, offset = 0) {
            long n = parts[i].byteSize() - offset;
            MemorySegment.copy(parts[i], offset, copy, at, n);
            at += n;
        }
        return new Write(new MemorySegment[] {copy}, owned);
    }

    /**
     * Polls the incoming ring on the calling thread for up to {@code patienceNanos} and takes the next frame
     * itself when {@code taker} wants it and it is whole: a blocking receive then gets its message without a
     * hand-off to the event loop and back. Stops early, taking nothing, when {@code mayTake} turns false, the
     * next frame is not the taker's, or the link closes; what it leaves goes to the event loop. While it polls the
     * peer writes without ringing. It spins without yielding (keep the patience short: it holds a core for that
     * long). Any thread but the link's event loop.
     *
     * @param headerBytes how many of a frame's first bytes the taker needs to decide
     * @return true when a frame was taken (its bytes are in the taker's memory and freed from the ring)
     */
    public boolean pollOnCallerThread(long patienceNanos, int headerBytes, Taker taker, BooleanSupplier mayTake) {
        if (!startCallerPolling()) {
            return false;
        }
        MemorySegment header = MemorySegment.ofArray(new byte[headerBytes]);
        long start = System.nanoTime();
        try {
            while (mayTake.getAsBoolean()) {
                int taken = tryTake(header, taker);
                if (taken != 0) {
                    return taken > 0;
                }
                if (System.nanoTime() - start >= patienceNanos) {
                    return false;
                }
                // No yield: a yielding poller was seen to share its core with the peer it waits for (the
                // scheduler left them together), each round trip then costing two yields' worth.
                Thread.onSpinWait();
            }
            return false;
        } finally {
            stopCallerPolling();
        }
    }

    /** Tells the peer not to ring while this thread polls; false when the link is closed. */
    private boolean startCallerPolling() {
        consumer.lock();
        try {
            if (closed) {
                return false;
            }
            callersPolling.incrementAndGet();
            channel.incoming().awake();
            return true;
        } finally {
            consumer.unlock();
        }
    }

    /** The last caller's thread stops polling: the event loop takes over what is there, or the peer rings again. */
    private void stopCallerPolling() {
        consumer.lock();
        try {
            SharedMemoryRing in = channel.incoming();
            if (callersPolling.decrementAndGet() == 0 && !closed && !in.sleep()) {
                in.awake();
                loop.execute(this::poll);
            }
        } finally {
            consumer.unlock();
        }
    }

    /**
     * Takes the next frame when it is the taker's and whole: 1 when taken, 0 when it may still come (nothing or
     * only part of it is here), -1 when it is not the taker's or the link closed.
     */
    private int tryTake(MemorySegment header, Taker taker) {
        consumer.lock();
        try {
            SharedMemoryRing in = channel.incoming();
            if (closed || !reader.betweenFrames()) {
                return -1;
            }
            if (in.readable() < header.byteSize()) {
                return 0;
            }
            in.copyOut(0, header);
            MemorySegment target = taker.target(header);
            long size = target == null ? Long.MAX_VALUE : header.byteSize() + target.byteSize();
            if (size > in.capacity()) {
                return -1;
            }
            if (in.readable() < size) {
                return 0;
            }
            in.copyOut(header.byteSize(), target);
            if (in.release(size)) {
                ringDoorbell.run();
            }
            return 1;
        } finally {
            consumer.unlock();
        }
    }

    /** A doorbell arrived, or the reader may go on (its parked payload found a receive): poll now. */
    public void wake() {
        poll();
    }

    /** An operation started waiting for data: poll from now on, whenever the last progress was. */
    public void expect() {
        lastProgress = System.nanoTime();
        poll();
    }

    /**
     * Moves what it can: incoming frames to the reader (unless a payload is parked), queued frames into the
     * outgoing ring; then spins or sleeps. Event loop only.
     */
    public void poll() {
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
        List<Write> written = new ArrayList<>();
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
                unmap();
            }
        }
        written.forEach(w -> w.finish(null));
        if (!closed) {
            scheduleOrSleep();
        }
    }


    /**
     * Hands the reader what the peer left in the incoming ring, even while a caller's thread polls: the peer
     * closed, so nothing more will come for that caller, and frames it wrote before it left (a GOODBYE, the data
     * of sends it finished) must not be lost with the link. Stops, as {@link #poll} does, when a payload parks.
     * Event loop only; does nothing inside a poll (whose reader is mid-frame) or once the link is closed.
     *
     * @return true when the reader took bytes
     */
    public boolean drainRemaining() {
        assert loop.inEventLoop() : "a shared-memory link drained on " + Thread.currentThread().getName();
        if (closed || polling) {
            return false;
        }
        consumer.lock();
        try {
            return drainLocked();
        } finally {
            consumer.unlock();
        }
    }

    /** Hands readable bytes to the reader until the ring is empty or a payload parks; true on progress. */
    private boolean drain() {
        if (callersPolling.get() > 0 || !consumer.tryLock()) {
            // A caller's thread polls for its frame: it hands what it leaves back to this loop when it stops.
            // Taking the frame here instead would make it an early message, and the caller's next receive slow.
            return false;
        }
        try {
            return drainLocked();
        } finally {
            consumer.unlock();
        }
    }

    private boolean drainLocked() {
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
    private boolean pump(List<Write> written) {
        SharedMemoryRing out = channel.outgoing();
        long moved = 0;
        boolean ring = false;
        List<Map.Entry<Write, RuntimeException>> failed = new ArrayList<>();
        RuntimeException cut = null;
        if (!producer.tryLock()) {
            // A caller's thread is writing into the ring itself (writeOrCopy): this loop reads on instead of
            // waiting for it, and that thread posts a poll if it leaves anything queued.
            return false;
        }
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
                if (w.written < w.size) {
                    w.fullSince = ringFull(w.fullSince);
                    break;
                }
                queue.pollFirst();
                roomFound(w.fullSince);
                written.add(w);
            }
            ring = moved > 0 && out.publish(moved);
        } finally {
            producer.unlock();
        }
        if (ring) {
            ringDoorbell.run();
        }
        failed.forEach(f -> f.getKey().finish(f.getValue()));
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
        long start = 0;
        for (MemorySegment p : w.parts) {
            long end = start + p.byteSize();
            if (w.written < end) {
                long n = out.offer(p, w.written - start, end - w.written, unpublished + (w.written - before));
                w.written += n;
                if (w.written < end) {
                    break;
                }
            }
            start = end;
        }
        return w.written - before;
    }

    private void scheduledPoll() {
        scheduled = false;
        if (System.nanoTime() - lastProgress > yieldAfterNanos) {
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
        // While a caller's thread polls, the loop's own polling would only take a core from it and its peer.
        boolean spin = callersPolling.get() == 0 && System.nanoTime() - lastProgress < budget;
        if (spin || !mayRest()) {
            scheduled = true;
            channel.incoming().awake();
            // Scheduled, not executed: Netty runs the tasks a task queues in the same batch (for up to a second),
            // so a link polling through its task queue kept the loop from its sockets while it spun: a doorbell
            // of another connection on the same loop waited the whole spin. A due scheduled task runs in the next
            // batch, after the loop has looked at its sockets (epoll without waiting).
            loop.schedule(pollTask, 0, TimeUnit.NANOSECONDS);
        } else if (waiting.getAsBoolean() && !checkPending) {
            // Asleep while an operation waits: look again now and then, so that a doorbell lost on its way (a
            // peer that died between writing and ringing is reported by its socket) costs a delay, not a hang.
            checkPending = true;
            loop.schedule(checkTask, CHECK_MILLIS, TimeUnit.MILLISECONDS);
        }
    }

    /** Sets the sleep flags the peer checks; false when data or room arrived meanwhile (poll on instead). */
    private boolean mayRest() {
        // While a caller's thread polls the incoming ring, it hands over (or sets the flag) when it stops.
        boolean callerReads = callersPolling.get() > 0;
        if (!callerReads && !reader.isParked() && !channel.incoming().sleep()) {
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
    public String state() {
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

    /** How many frames found the outgoing ring full and had to wait for room (each counted once). */
    public long ringFullCount() {
        return fullCount.get();
    }

    /**
     * How long frames waited for room in the outgoing ring, in nanoseconds, all frames together: from finding it
     * full to their last byte in (a frame still waiting counts once it is in).
     */
    public long ringFullNanos() {
        return fullNanos.get();
    }

    /** True when frames wait for room, or may: a caller's thread is writing into the ring right now. */
    private boolean hasQueued() {
        if (!producer.tryLock()) {
            return true;
        }
        try {
            return !queue.isEmpty();
        } finally {
            producer.unlock();
        }
    }

    /** Fails what is still queued and unmaps the rings. Event loop only. */
    public void close(Throwable cause) {
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
        failed.forEach(w -> w.finish(cause));
        if (!polling) {
            unmap();
        }
    }

    /** Unmaps the rings once no caller's thread reads them. */
    private void unmap() {
        consumer.lock();
        try {
            channel.close();
        } finally {
            consumer.unlock();
        }
    }
}
