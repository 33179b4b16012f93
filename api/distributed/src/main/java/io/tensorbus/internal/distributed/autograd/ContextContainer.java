package io.tensorbus.internal.distributed.autograd;

import java.util.Collection;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * One worker's distributed autograd contexts, as PyTorch's {@code DistAutogradContainer}: it makes context ids
 * and autograd message ids that are unique in the job without a round trip (the worker's id in the top
 * {@value #WORKER_BITS} bits, a counter below), creates the context a message of another worker names on first
 * contact, and releases contexts. Thread-safe.
 */
final class ContextContainer {
    /** Released contexts of other workers remembered, so a late message cannot bring one back. */
    private static final int TOMBSTONES = 65536;

    /** Bits of an id that hold the worker id, as PyTorch's 16. */
    static final int WORKER_BITS = 16;
    /** Bits of an id below the worker id: the per-worker counter, as PyTorch's 48. */
    static final int COUNTER_BITS = Long.SIZE - WORKER_BITS;
    /** The largest worker id an id can hold. */
    static final int MAX_WORKER_ID = (1 << (WORKER_BITS - 1)) - 1;
    private static final long COUNTER_MASK = (1L << COUNTER_BITS) - 1;

    private final int workerId;
    private final AtomicLong nextContext = new AtomicLong();
    private final AtomicLong nextMessage = new AtomicLong();
    private final Map<Long, DistAutogradContext> contexts = new ConcurrentHashMap<>();
    private final Set<Long> tombstones = Collections.newSetFromMap(new LinkedHashMap<>() {
        @Override
        protected boolean removeEldestEntry(Map.Entry<Long, Boolean> eldest) {
            return size() > TOMBSTONES;
        }
    });

    /**
     * @param workerId this worker's rank in the RPC job, 0 to {@value #MAX_WORKER_ID}
     * @throws IllegalArgumentException for a worker id an id cannot hold
     */
    ContextContainer(int workerId) {
        if (workerId < 0 || workerId > MAX_WORKER_ID) {
            throw new IllegalArgumentException("worker id " + workerId + " is outside 0.." + MAX_WORKER_ID
                    + ", the ids distributed autograd can number");
        }
        this.workerId = workerId;
    }

    /** The worker whose counter made {@code id} (a context id or an autograd message id). */
    static int workerOf(long id) {
        return (int) (id >>> COUNTER_BITS);
    }

    /** A new context started on this worker (the initiator of its backward pass). */
    DistAutogradContext newContext() {
        long id = next(nextContext, "context");
        DistAutogradContext context = new DistAutogradContext(id);
        contexts.put(id, context);
        return context;
    }

    /** A new autograd message id, for a send/recv pair recorded on this worker. */
    long newMessageId() {
        return next(nextMessage, "autograd message");
    }

    /**
     * The context {@code id}, created when a message of another worker reaches this one for the first time.
     *
     * @throws IllegalArgumentException when {@code id} names this worker but no live context (released, or never
     *     made here): a peer must not bring a context of ours back to life
     */
    DistAutogradContext getOrCreate(long id) {
        if (workerOf(id) == workerId) {
            return retrieve(id);
        }
        DistAutogradContext live = contexts.get(id);
        if (live != null) {
            live.touch();
            return live;
        }
        synchronized (tombstones) {
            if (tombstones.contains(id)) {
                throw new IllegalArgumentException("distributed autograd context " + describe(id)
                        + " was released on worker " + workerId);
            }
            return contexts.computeIfAbsent(id, DistAutogradContext::new);
        }
    }

    /**
     * The live context {@code id}.
     *
     * @throws IllegalArgumentException naming the id when there is none (PyTorch: "Could not find autograd
     *     context with id")
     */
    DistAutogradContext retrieve(long id) {
        DistAutogradContext context = contexts.get(id);
        if (context == null) {
            throw new IllegalArgumentException("no distributed autograd context " + describe(id) + " on worker "
                    + workerId + ": it was released or never reached this worker");
        }
        context.touch();
        return context;
    }

    /** The live context {@code id}, or null. */
    DistAutogradContext find(long id) {
        return contexts.get(id);
    }

    /**
     * Drops context {@code id}; the context it was is released too, and one of another worker cannot be created
     * here again. Returns false when there was none.
     */
    boolean release(long id) {
        DistAutogradContext context;
        synchronized (tombstones) {
            context = contexts.remove(id);
            if (workerOf(id) != workerId) {
                tombstones.add(id);
            }
        }
        if (context == null) {
            return false;
        }
        context.release();
        return true;
    }

    /** The live contexts, for release after a worker was lost and for the debug counts. */
    Collection<DistAutogradContext> contexts() {
        return List.copyOf(contexts.values());
    }

    /** How many contexts are live here (PyTorch's {@code num_current_contexts}). */
    int size() {
        return contexts.size();
    }

    /** {@code id} as {@code worker:counter}, how messages name it. */
    static String describe(long id) {
        return workerOf(id) + ":" + (id & COUNTER_MASK);
    }

    private long next(AtomicLong counter, String what) {
        long n = counter.getAndIncrement();
        if (n > COUNTER_MASK) {
            throw new IllegalStateException("worker " + workerId + " ran out of " + what + " ids");
        }
        return ((long) workerId << COUNTER_BITS) | n;
    }
}
