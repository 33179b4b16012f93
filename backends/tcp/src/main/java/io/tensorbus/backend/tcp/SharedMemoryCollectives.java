package io.tensorbus.backend.tcp;

import io.tensorbus.DType;
import io.tensorbus.c10d.CollectiveMismatchException;
import io.tensorbus.c10d.CommunicationException;
import io.tensorbus.c10d.CommunicationTimeoutException;
import io.tensorbus.c10d.PeerLostException;
import io.tensorbus.c10d.ReduceOp;
import io.tensorbus.spi.support.HostReductions;
import io.tensorbus.spi.support.shm.SharedMemoryArea;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import java.lang.foreign.MemorySegment;
import java.lang.ref.Reference;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import java.util.function.IntFunction;

/**
 * Collectives of host buffers through a {@link SharedMemoryArea} that every member of the group maps, with no
 * thread hand-off between ranks and no event loop: barrier, broadcast, and all-reduce in DeepSpeed's CPU scheme.
 * All-reduce goes slice by slice: each rank copies the shares of its input that its peers reduce into its own area
 * buffer; once all have, reduces its own share of its input with the peers' copies in place and offers the result
 * in its buffer; once all have, copies the peers' results into its output: two barriers a slice, on counters in
 * shared memory, and no rank's own share ever copied in or out.
 * When every member is a thread of this process ({@code tensorbus launch --ranks-as-threads}, {@code spawn}), the
 * all-reduce skips the area's buffers: each rank offers its own buffer to the others ({@link ProcessLocalGroup});
 * between two barriers the ranks claim the shares of the slices one after another from a shared counter, reduce
 * each straight from all the buffers and write the result into each of them; a count of the peers inside each
 * offered buffer keeps a rank that leaves early (a failure) from returning while a peer still touches its memory.
 * The shares and the order of the operands are those of the copying scheme, so results are bit-identical.
 * Broadcast: the root copies a slice into its buffer, and once it has, the others copy it out. Each rank's two
 * buffers alternate between slices, so that a rank writes the next slice while its peers still read the last
 * (every rank passes a barrier after it read slice i and before anyone writes slice i + 2).
 *
 * <p>Runs on the group's {@link CollectiveThread}, one collective at a time in call order; every wait polls, then
 * yields, then sleeps briefly, and gives up at the group's timeout, as soon as the group breaks, or when a peer
 * announced another collective under the same number.
 */
final class SharedMemoryCollectives implements AutoCloseable {
    /** Shares start on a 64-byte line of every buffer, so that no two ranks write one cache line. */
    private static final long SHARE_ALIGN = 64;
    /**
     * How long a wait spins before it yields between polls: ranks may outnumber cores, and a spinning rank then
     * holds the core its peer needs until the scheduler's slice ends (milliseconds).
     */
    private static final long YIELD_AFTER_NANOS = 1_000;
    private static final long SLEEP_NANOS = 20_000;
    /**
     * The piece of a share reduced and then written into the peers' buffers before the next, in bytes: it is still
     * in this core's cache when it is copied out.
     */
    private static final long PIECE_BYTES = 256 * 1024;

    private final TcpBackend backend;
    private final SharedMemoryArea area;
    private final int rank;
    private final int size;
    private final long spinNanos;
    private final long timeoutNanos;
    private final CollectiveThread thread;
    /** This rank's published progress: barriers passed. Collective thread only. */
    private long progress;
    /** Which of each rank's two buffers the next slice uses. Collective thread only. */
    private int slot;
    /** The first failure of a collective here, or null. Collective thread only. */
    private CommunicationException failure;
    /** The ranks of this group in this process, or null when this rank may not all-reduce straight with them. */
    private final ProcessLocalGroup local;
    /**
     * Whether the members may all be threads of this process: true until the first all-reduce's first barrier, after
     * which every rank has joined {@link #local} that will (ranks whose settings refuse never do), so every rank
     * decides alike. Collective thread only.
     */
    private boolean maybeOneProcess = true;
    /** All-reduces that went straight between the members' buffers (for tests). */
    private volatile long inProcessAllReduces;

    /**
     * The collectives of {@code backend}'s group in {@code area}: its thread polls {@code pollNanos} for the next call
     * before it sleeps, a wait for a peer polls {@code spinNanos} before it sleeps, and gives up after
     * {@code timeoutNanos}; with {@code inProcess}, all-reduces of members that are all threads of this process
     * go straight between their buffers.
     */
    SharedMemoryCollectives(TcpBackend backend, SharedMemoryArea area, long pollNanos, long spinNanos,
                          long timeoutNanos, boolean inProcess) {
        this.backend = backend;
        this.local = inProcess ? ProcessLocalGroup.join(area.identity(), backend.size()) : null;
        this.area = area;
        this.rank = backend.rank();
        this.size = backend.size();
        this.spinNanos = spinNanos;
        this.timeoutNanos = timeoutNanos;
        String name = "tensorbus-shm-collectives-" + backend.groupName() + "-" + rank;
        // The area is unmapped by the thread that uses it, after its last collective.
        this.thread = new CollectiveThread(name, pollNanos, area::close);
    }

    /**
     * Runs collective {@code op}, an all-reduce of host segment {@code data}, on the collective thread once
     * {@code after} (the collective called before it) completed; completes there.
     */
    Future<Void> allReduce(CollectiveOp op, MemorySegment data, ReduceOp reduceOp, DType dtype, Future<?> after) {
        return submit(op, after, () -> runAllReduce(op, data, reduceOp, dtype));
    }

    /** Runs collective {@code op}, a broadcast of host {@code data} from {@code root}, as {@link #allReduce}. */
    Future<Void> broadcast(CollectiveOp op, MemorySegment data, int root, Future<?> after) {
        return submit(op, after, () -> runBroadcast(op, data, root));
    }

    /** Runs collective {@code op}, a barrier, as {@link #allReduce}. */
    Future<Void> barrier(CollectiveOp op, Future<?> after) {
        return submit(op, after, () -> barrier(op));
    }

    /**
     * Says in the area what collective {@code op} is ({@code onArea}: it runs there), for peers that wait there to
     * check; called on the caller's thread, in call order, for every collective of the group. A group closed
     * meanwhile has unmapped the area: the collective then fails as closed.
     */
    void announce(CollectiveOp op, boolean onArea) {
        try {
            area.announce(rank, op.sequence, op.call.announcement(onArea));
        } catch (IllegalStateException e) {
            if (!backend.isClosed()) {
                throw e;
            }
        }
    }

    /** What {@code peer} announced as its collective {@code sequence}, or null. */
    private long[] announcement(int peer, long sequence) {
        try {
            return area.announcement(peer, sequence);
        } catch (IllegalStateException e) {
            return null; // unmapped: the group closed
        }
    }

    /** Runs {@code body} for {@code op} on the collective thread once {@code after} completed; completes there. */
    private Future<Void> submit(CollectiveOp op, Future<?> after, Runnable body) {
        Promise<Void> done = op.promise;
        Runnable work = () -> {
            try {
                failIfBroken(op);
                body.run();
                done.tryComplete();
            } catch (CommunicationException e) {
                failed(e);
                done.tryFail(e);
            } catch (RuntimeException | Error e) {
                // An Error too: the thread must go on, or every later collective of the group would wait for it.
                CommunicationException failure = new CommunicationException(backend.groupName(), op.sequence,
                        backend.describe(op) + " failed on " + backend.who(rank) + ": " + e, e);
                failed(failure);
                done.tryFail(failure);
            }
        };
        after.onComplete(ar -> {
            try {
                thread.execute(work);
            } catch (RejectedExecutionException e) {
                done.tryFail(new CommunicationException(backend.groupName(), op.sequence, backend.describe(op)
                        + " was called after the group was closed on " + backend.who(rank), null));
            }
        });
        return done.future();
    }

    private void runAllReduce(CollectiveOp op, MemorySegment data, ReduceOp reduceOp, DType dtype) {
        if (data.byteSize() == 0) {
            barrier(op); // so that the peers' calls are checked all the same
            return;
        }
        if (maybeOneProcess && allReduceInProcess(op, data, reduceOp, dtype)) {
            return;
        }
        long slice = sliceOf(dtype);
        for (long at = 0; at < data.byteSize(); at += slice) {
            MemorySegment in = data.asSlice(at, Math.min(slice, data.byteSize() - at));
            offerShares(in);
            barrier(op);
            reduceShare(in, reduceOp, dtype);
            barrier(op);
            gatherShares(in);
            slot ^= 1;
        }
    }

    /** How many all-reduces went straight between the members' buffers. Any thread. */
    long inProcessAllReduces() {
        return inProcessAllReduces;
    }

    /** The slices an all-reduce of {@code dtype} goes by, in bytes: whole elements. */
    private long sliceOf(DType dtype) {
        return area.sliceBytes() - area.sliceBytes() % dtype.byteSize();
    }

    /**
     * All-reduces {@code data} straight between the members' buffers when every member is a thread of this process
     * and the buffers are of one size and apart; false (after one barrier that every rank passes, and nothing
     * changed) otherwise, every rank deciding alike from what all offered before it.
     */
    private boolean allReduceInProcess(CollectiveOp op, MemorySegment data, ReduceOp reduceOp, DType dtype) {
        ProcessLocalGroup.Offer mine = local == null ? null : local.offer(rank, op.sequence, data);
        try {
            barrier(op);
            maybeOneProcess = local != null && local.whole();
            ProcessLocalGroup.Offer[] offers = maybeOneProcess ? local.offersFor(op.sequence) : null;
            if (offers == null) {
                return false;
            }
            reduceAcross(op, offers, reduceOp, dtype);
            barrier(op);
            inProcessAllReduces++; // only this thread writes it
            return true;
        } finally {
            // After a failure too: no peer may touch the caller's memory once its future completed.
            if (mine != null) {
                mine.close();
            }
            Reference.reachabilityFence(data);
        }
    }

    /**
     * Reduces shares of the slices from all {@code buffers} ({@link #combine}, the share's owner first, as
     * {@link #reduceShare} does) in place, piece by piece, writing each piece into every other buffer. The ranks
     * claim the shares from one counter rather than each taking its own: a rank that came late or lost its core for a
     * while then leaves its shares to the others instead of holding every rank at the closing barrier, while each
     * share is still combined in its owner's order, whoever claims it.
     */
    private void reduceAcross(CollectiveOp op, ProcessLocalGroup.Offer[] offers, ReduceOp reduceOp, DType dtype) {
        MemorySegment[] buffers = new MemorySegment[size];
        int entered = 0;
        try {
            for (; entered < size; entered++) {
                buffers[entered] = offers[entered].buffer;
                if (entered != rank && !offers[entered].enter()) {
                    throw new CommunicationException(backend.groupName(), op.sequence, backend.describe(op)
                            + " failed on " + backend.who(rank) + ": " + backend.who(entered)
                            + " left it before this rank read its buffer", null);
                }
            }
            long slice = sliceOf(dtype);
            long shares = (buffers[rank].byteSize() + slice - 1) / slice * size;
            AtomicLong claims = local.claims(op.sequence);
            for (long k = claims.getAndIncrement(); k < shares; k = claims.getAndIncrement()) {
                long at = k / size * slice;
                reduceShareAcross(buffers, at, Math.min(slice, buffers[rank].byteSize() - at), (int) (k % size),
                        reduceOp, dtype);
            }
        } finally {
            for (int r = 0; r < entered; r++) {
                if (r != rank) {
                    offers[r].leave();
                }
            }
        }
    }

    /** Reduces {@code owner}'s share of the slice of {@code bytes} at {@code at} across {@code buffers}, by pieces. */
    private void reduceShareAcross(MemorySegment[] buffers, long at, long bytes, int owner, ReduceOp reduceOp,
                                   DType dtype) {
        long end = at + shareStart(owner + 1, bytes);
        for (long from = at + shareStart(owner, bytes); from < end; from += PIECE_BYTES) {
            reducePiece(buffers, owner, from, Math.min(PIECE_BYTES, end - from), reduceOp, dtype);
        }
    }

    private void reducePiece(MemorySegment[] buffers, int owner, long from, long bytes, ReduceOp reduceOp,
                             DType dtype) {
        MemorySegment acc = buffers[owner].asSlice(from, bytes);
        if (size == 2 && reduceOp.type() != ReduceOp.Type.AVG) {
            // combine's order for two ranks, with the copy into the other buffer in the same pass over both
            HostReductions.reduceIntoBoth(reduceOp, dtype, acc, buffers[1 - owner].asSlice(from, bytes));
            return;
        }
        combine(owner, acc, r -> buffers[r].asSlice(from, bytes), reduceOp, dtype);
        for (int r = 0; r < size; r++) {
            if (r != owner) {
                buffers[r].asSlice(from, bytes).copyFrom(acc);
            }
        }
    }

    private void runBroadcast(CollectiveOp op, MemorySegment data, int root) {
        if (data.byteSize() == 0) {
            barrier(op);
            return;
        }
        long slice = area.sliceBytes();
        for (long at = 0; at < data.byteSize(); at += slice) {
            MemorySegment part = data.asSlice(at, Math.min(slice, data.byteSize() - at));
            if (rank == root) {
                area.buffer(rank, slot).asSlice(0, part.byteSize()).copyFrom(part);
            }
            barrier(op);
            if (rank != root) {
                part.copyFrom(area.buffer(root, slot).asSlice(0, part.byteSize()));
            }
            slot ^= 1;
        }
    }

    /** Copies the peers' shares of {@code in} into this rank's buffer, where each peer reduces its own. */
    private void offerShares(MemorySegment in) {
        MemorySegment mine = area.buffer(rank, slot);
        for (int r = 0; r < size; r++) {
            long from = shareStart(r, in.byteSize());
            long to = shareStart(r + 1, in.byteSize());
            if (r != rank && from < to) {
                mine.asSlice(from, to - from).copyFrom(in.asSlice(from, to - from));
            }
        }
    }

    /**
     * Combines this rank's share of {@code in} with the same share of every peer's buffer, in rank order after its
     * own, in place, and offers the result in its buffer: its own input never goes through shared memory.
     */
    private void reduceShare(MemorySegment in, ReduceOp reduceOp, DType dtype) {
        long from = shareStart(rank, in.byteSize());
        long to = shareStart(rank + 1, in.byteSize());
        if (from >= to) {
            return;
        }
        MemorySegment acc = in.asSlice(from, to - from);
        combine(rank, acc, r -> area.buffer(r, slot).asSlice(from, to - from), reduceOp, dtype);
        area.buffer(rank, slot).asSlice(from, to - from).copyFrom(acc);
    }

    /**
     * Combines {@code acc}, the operand of the share's {@code owner}, with each other rank's ({@code peer} gives
     * them) in rank order, then divides for AVG: the one order both all-reduce paths use, so that their results are
     * bit-identical.
     */
    private void combine(int owner, MemorySegment acc, IntFunction<MemorySegment> peer, ReduceOp reduceOp,
                         DType dtype) {
        for (int r = 0; r < size; r++) {
            if (r != owner) {
                HostReductions.reduceInto(reduceOp, dtype, acc, peer.apply(r));
            }
        }
        if (reduceOp == ReduceOp.AVG) {
            HostReductions.divide(dtype, acc, size);
        }
    }

    /** Copies the peers' reduced shares of the current slice into {@code out}. */
    private void gatherShares(MemorySegment out) {
        for (int r = 0; r < size; r++) {
            long from = shareStart(r, out.byteSize());
            long to = shareStart(r + 1, out.byteSize());
            if (r != rank && from < to) {
                out.asSlice(from, to - from).copyFrom(area.buffer(r, slot).asSlice(from, to - from));
            }
        }
    }

    /**
     * Where rank {@code r}'s share of a slice of {@code bytes} starts: equal shares, each a whole number of
     * {@link #SHARE_ALIGN}-byte lines (and so of elements), the last rank's running to the end.
     */
    private long shareStart(int r, long bytes) {
        if (r >= size) {
            return bytes;
        }
        long lines = (bytes + SHARE_ALIGN - 1) / SHARE_ALIGN;
        long perRank = (lines + size - 1) / size;
        return Math.min(bytes, r * perRank * SHARE_ALIGN);
    }

    /** Publishes this rank's next step and waits until every rank has published it too. */
    private void barrier(CollectiveOp op) {
        long step = ++progress;
        long stamp = stamp(op);
        area.publishProgress(rank, step, stamp);
        long start = System.nanoTime();
        for (int r = 0; r < size; r++) {
            while (area.progress(r) < step) {
                waitForPeer(op, r, start);
            }
            // The peer cannot publish step + 2, which reuses the stamp's place, before this rank published step + 1.
            if (area.stamp(r, step) != stamp) {
                throw mismatch(op, r);
            }
        }
    }

    /** What a step of {@code op} is stamped with: its sequence number and call, mixed into one word. */
    private static long stamp(CollectiveOp op) {
        long h = op.sequence * 0x9E3779B97F4A7C15L;
        for (long w : op.call.announcement(true)) {
            h = (h ^ w) * 0xBF58476D1CE4E5B9L;
            h ^= h >>> 31;
        }
        return h;
    }

    private void waitForPeer(CollectiveOp op, int peer, long start) {
        long waited = System.nanoTime() - start;
        if (waited < YIELD_AFTER_NANOS) {
            Thread.onSpinWait();
            return;
        }
        failIfBroken(op);
        checkCall(op, peer);
        PeerLostException left = backend.departedBefore(op);
        if (left != null) {
            throw left;
        }
        if (waited > timeoutNanos) {
            throw timedOut(op);
        }
        if (waited < spinNanos) {
            Thread.yield();
        } else {
            LockSupport.parkNanos(SLEEP_NANOS);
        }
    }

    /**
     * A collective here failed: the next ones here fail with it at once, and the group is marked broken before
     * the failed collective's future completes, so that no operation called after it can still succeed.
     */
    private void failed(CommunicationException cause) {
        if (failure == null) {
            failure = cause;
        }
        backend.breakGroupFrom(cause);
    }

    /** Throws the group's failure, in {@code op}'s words, once the group broke or closed. */
    private void failIfBroken(CollectiveOp op) {
        CommunicationException broken = backend.brokenCause();
        broken = broken != null ? broken : failure;
        if (broken != null) {
            throw broken.forOperation(backend.groupName(), op.sequence, backend.describe(op) + " failed on "
                    + backend.who(rank) + ": " + broken.getMessage());
        }
    }

    private CommunicationTimeoutException timedOut(CollectiveOp op) {
        List<Integer> behind = new ArrayList<>();
        for (int r = 0; r < size; r++) {
            if (area.progress(r) < progress) {
                behind.add(r);
            }
        }
        return new CommunicationTimeoutException(backend.groupName(), op.sequence, backend.describe(op)
                + " timed out on " + backend.who(rank) + " after " + timeoutNanos / 1_000_000 + " ms in shared memory: "
                + behind.stream().map(backend::who).toList() + " did not reach it",
                behind.stream().mapToInt(Integer::intValue).toArray());
    }

    /** Throws a mismatch when {@code peer} announced another call than {@code op} under its number. */
    private void checkCall(CollectiveOp op, int peer) {
        long[] theirs = announcement(peer, op.sequence);
        if (theirs != null && !op.call.matches(theirs)) {
            throw mismatch(op, peer);
        }
    }

    /** The mismatch of {@code op} with what {@code peer} called, in the words of its announcement where it has one. */
    private CollectiveMismatchException mismatch(CollectiveOp op, int peer) {
        long[] theirs = announcement(peer, op.sequence);
        long[] mine = op.call.announcement(true);
        String what;
        if (theirs == null) {
            what = "another collective (its announcement of #" + op.sequence + " is not there: it is a collective"
                    + " ahead or behind)";
        } else if (Call.onArea(theirs) != Call.onArea(mine) && Call.sameCall(theirs, mine)) {
            what = Call.describe(theirs) + " on a device buffer, which goes around the shared area (every rank must"
                    + " pass host buffers, or every rank device buffers)";
        } else {
            String shape = theirs[0] == mine[0] && theirs[1] == mine[1] ? " (the same number of elements in another"
                    + " shape)" : "";
            what = Call.describe(theirs) + shape;
        }
        return new CollectiveMismatchException(backend.groupName(), op.sequence, "collective mismatch in group '"
                + backend.groupName() + "' at collective #" + op.sequence + ": " + backend.who(rank) + " called "
                + op.call.describe() + " but " + backend.who(peer) + " called " + what
                + " (every rank must call the same collectives in the same order)");
    }

    /**
     * Stops the collective thread once its queued work ended (each fails, the group being closed); the thread then
     * unmaps the area.
     */
    @Override
    public void close() {
        thread.close();
        if (local != null) {
            local.leave();
        }
    }
}
