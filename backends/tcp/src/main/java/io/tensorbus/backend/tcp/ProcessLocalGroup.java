package io.tensorbus.backend.tcp;

import java.lang.foreign.MemorySegment;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.atomic.AtomicReferenceArray;

/**
 * The ranks of one group that are threads of this process ({@code tensorbus launch --ranks-as-threads},
 * {@code spawn}), found through their shared area's random identity: where each offers the others its buffer for an
 * all-reduce ({@link SharedMemoryCollectives}). Only a rank of this JVM can join, so a group whose every rank joined
 * is wholly in this process, and the buffers are the callers' own segments: no address crosses a process.
 */
final class ProcessLocalGroup {
    private static final Map<String, ProcessLocalGroup> GROUPS = new ConcurrentHashMap<>();

    private final String identity;
    private final int size;
    private final AtomicInteger joined = new AtomicInteger();
    private final AtomicReferenceArray<Offer> offers;
    private final AtomicReference<Claims> claims = new AtomicReference<>(new Claims(Long.MIN_VALUE));

    private ProcessLocalGroup(String identity, int size) {
        this.identity = identity;
        this.size = size;
        this.offers = new AtomicReferenceArray<>(size);
    }

    /** Joins the ranks of this process in the group of area {@code identity} with {@code size} ranks. */
    static ProcessLocalGroup join(String identity, int size) {
        ProcessLocalGroup group = GROUPS.computeIfAbsent(identity, id -> new ProcessLocalGroup(id, size));
        group.joined.incrementAndGet();
        return group;
    }

    /** A rank of the group closed; the last one takes the group out of the process's table. */
    void leave() {
        if (joined.decrementAndGet() == 0) {
            GROUPS.remove(identity, this);
        }
    }

    /** True when every rank of the group joined, that is, all are threads of this process. */
    boolean whole() {
        return joined.get() == size;
    }

    /** Offers {@code buffer} as {@code rank}'s for collective {@code sequence}; its owner closes it when done. */
    Offer offer(int rank, long sequence, MemorySegment buffer) {
        Offer o = new Offer(sequence, buffer);
        offers.set(rank, o);
        return o;
    }

    /**
     * The counter the ranks claim the shares of collective {@code sequence} from, one for all of them. Call it only
     * between the collective's two barriers, when every rank is done with the one before and none is past this one.
     */
    AtomicLong claims(long sequence) {
        while (true) {
            Claims c = claims.get();
            if (c.sequence == sequence) {
                return c.next;
            }
            Claims fresh = new Claims(sequence);
            if (claims.compareAndSet(c, fresh)) {
                return fresh.next;
            }
        }
    }

    /**
     * Every rank's offer for collective {@code sequence}, by rank, once a barrier showed all made it; null when their
     * buffers differ in size or overlap (two ranks passing the same memory), which every rank sees alike.
     *
     * @throws IllegalStateException when a rank's offer is not for {@code sequence} (a broken invariant)
     */
    Offer[] offersFor(long sequence) {
        Offer[] all = new Offer[size];
        for (int r = 0; r < size; r++) {
            all[r] = offers.get(r);
            if (all[r] == null || all[r].sequence != sequence) {
                throw new IllegalStateException("rank " + r + " offered no buffer for collective " + sequence);
            }
            if (all[r].buffer.byteSize() != all[0].buffer.byteSize()) {
                return null;
            }
            for (int q = 0; q < r; q++) {
                if (all[q].buffer.asOverlappingSlice(all[r].buffer).isPresent()) {
                    return null;
                }
            }
        }
        return all;
    }

    /** The next unclaimed share of one collective. */
    private record Claims(long sequence, AtomicLong next) {
        Claims(long sequence) {
            this(sequence, new AtomicLong());
        }
    }

    /** One rank's buffer offered for one collective: peers count themselves in and out, and its owner closes it. */
    static final class Offer {
        private static final long CLOSED = Long.MIN_VALUE;
        final long sequence;
        final MemorySegment buffer;
        private final AtomicLong users = new AtomicLong();

        private Offer(long sequence, MemorySegment buffer) {
            this.sequence = sequence;
            this.buffer = buffer;
        }

        /** Counts a peer in: it may then read and write the buffer until it leaves; false once closed. */
        boolean enter() {
            while (true) {
                long u = users.get();
                if ((u & CLOSED) != 0) {
                    return false;
                }
                if (users.compareAndSet(u, u + 1)) {
                    return true;
                }
            }
        }

        /** Counts a peer out. */
        void leave() {
            users.decrementAndGet();
        }

        /**
         * Lets no more peers in and waits for those inside to leave (they only reduce and copy, so briefly): once this
         * returns no peer touches the buffer again.
         */
        void close() {
            long u = users.getAndUpdate(v -> v | CLOSED);
            for (int polls = 0; (u & ~CLOSED) != 0; polls++) {
                if (polls < 1000) {
                    Thread.onSpinWait();
                } else {
                    Thread.yield(); // a peer inside may need this core
                }
                u = users.get();
            }
        }
    }
}
