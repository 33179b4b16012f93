package io.tensorbus.distributed.algorithms;

import io.tensorbus.c10d.ReduceOp;
import io.tensorbus.distributed.ProcessGroup;
import io.tensorbus.internal.distributed.Blocking;
import io.tensorbus.tensor.Tensor;
import java.util.ArrayList;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * The join context for uneven inputs ({@code torch.distributed.algorithms.Join}): ranks train for as many
 * iterations as they have data, inside {@code try (Join join = Join.of(ddp, zero)) { ... }}. Every iteration the
 * first joinable's {@link #notifyJoinContext} all-reduces the number of ranks still training; a rank whose loop
 * ended runs {@link #close()}, which answers those all-reduces with zero and runs every joinable's
 * {@link JoinHook#mainHook()} once per iteration the others still train, then each
 * {@link JoinHook#postHook(boolean)} once they have all joined.
 * {@link io.tensorbus.parallel.DistributedDataParallel#join()} is
 * {@code Join.of(ddp)}.
 *
 * <p>With {@code throwOnEarlyTermination}, the first rank to run out makes every rank throw instead, at its next
 * iteration. The joinables' groups must be the same group; a joinable is in at most one open context.
 */
public final class Join implements AutoCloseable {
    /** The open context of each joinable, found by {@link #notifyJoinContext}. */
    private static final Map<Joinable, Join> OPEN = Collections.synchronizedMap(new IdentityHashMap<>());

    private final List<Joinable> joinables;
    private final List<JoinHook> hooks = new ArrayList<>();
    private final boolean throwOnEarlyTermination;
    private final ProcessGroup group;
    private volatile boolean closing;
    private volatile boolean closed;

    private Join(List<Joinable> joinables, boolean throwOnEarlyTermination) {
        if (joinables.isEmpty()) {
            throw new IllegalArgumentException("a join context needs at least one joinable");
        }
        this.joinables = List.copyOf(joinables);
        this.throwOnEarlyTermination = throwOnEarlyTermination;
        this.group = Objects.requireNonNull(joinables.getFirst().joinProcessGroup(), "joinProcessGroup");
        for (Joinable j : this.joinables) {
            if (j.joinProcessGroup() != group) {
                throw new IllegalArgumentException("every joinable of a join context must use one group: "
                        + j.joinProcessGroup() + " is not " + group);
            }
        }
        synchronized (OPEN) {
            for (Joinable j : this.joinables) {
                if (OPEN.containsKey(j)) {
                    throw new IllegalStateException("a join context is already open on " + j);
                }
            }
            this.joinables.forEach(j -> OPEN.put(j, this));
        }
        this.joinables.forEach(j -> hooks.add(Objects.requireNonNull(j.joinHook(), "joinHook")));
    }

    /**
     * Opens a context over {@code joinables}, in the order their collectives run in an iteration.
     *
     * @throws IllegalArgumentException when there is none or their groups differ
     * @throws IllegalStateException when one is already in an open context
     */
    public static Join of(Joinable... joinables) {
        return of(List.of(joinables), false);
    }

    /**
     * Opens a context over {@code joinables}; with {@code throwOnEarlyTermination} every rank throws as soon as one
     * runs out of data.
     *
     * @throws IllegalArgumentException when there is none or their groups differ
     * @throws IllegalStateException when one is already in an open context
     */
    public static Join of(List<Joinable> joinables, boolean throwOnEarlyTermination) {
        Objects.requireNonNull(joinables, "joinables");
        return new Join(joinables, throwOnEarlyTermination);
    }

    /**
     * Called by {@code joinable} once per iteration before its collectives ({@code notify_join_context}): for the
     * first joinable of an open context on a rank still training, all-reduces "one more rank training" to match the
     * joined ranks' count. Blocks.
     *
     * @return true when {@code joinable} is in an open context on a rank still training
     * @throws IllegalStateException with {@code throwOnEarlyTermination}, when some rank has run out of data
     */
    public static boolean notifyJoinContext(Joinable joinable) {
        Join join = OPEN.get(joinable);
        if (join == null || join.closing) {
            return false;
        }
        if (join.joinables.getFirst() == joinable) {
            long[] counts = join.allReduceCounts(1, 0);
            if (counts[1] > 0) {
                // The ranks that ran out have thrown: closing this context must not wait for them.
                join.closed = true;
                join.joinables.forEach(OPEN::remove);
                throw new IllegalStateException("rank " + join.globalRank() + ": a rank ran out of inputs and the join"
                        + " context was opened with throwOnEarlyTermination: every rank stops");
            }
        }
        return true;
    }

    /**
     * Shadows the ranks still training until every rank has joined, then runs the post hooks. Blocks; idempotent.
     *
     * @throws IllegalStateException with {@code throwOnEarlyTermination}, when other ranks still had data
     * @throws io.tensorbus.c10d.CommunicationException when the group fails or times out
     */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        closing = true;
        try {
            boolean lastJoiner = true;
            for (long[] c = allReduceCounts(0, throwOnEarlyTermination ? 1 : 0); c[0] > 0;
                    c = allReduceCounts(0, throwOnEarlyTermination ? 1 : 0)) {
                if (throwOnEarlyTermination) {
                    throw new IllegalStateException("rank " + globalRank() + " ran out of inputs while " + c[0]
                            + " rank(s) still train, and the join context was opened with throwOnEarlyTermination");
                }
                lastJoiner = false;
                hooks.forEach(JoinHook::mainHook);
            }
            for (JoinHook hook : hooks) {
                hook.postHook(lastJoiner);
            }
        } finally {
            joinables.forEach(OPEN::remove);
        }
    }

    /** Sums (ranks training, ranks asking all to stop) over the group. */
    private long[] allReduceCounts(int training, int terminate) {
        Tensor t = Tensor.of(new int[] {training, terminate}, 2);
        Blocking.await(group.allReduce(t, ReduceOp.SUM), group.timeout().plusSeconds(5), "the join context on rank "
                + globalRank() + ": the count of ranks still training");
        return new long[] {t.getLong(0), t.getLong(1)};
    }

    private int globalRank() {
        return group.globalRank(group.rank());
    }
}
