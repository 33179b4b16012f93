package io.tensorbus.backend.nccl;

import io.tensorbus.DType;
import io.tensorbus.c10d.CollectiveMismatchException;
import io.tensorbus.c10d.CommunicationException;
import io.tensorbus.c10d.CommunicationTimeoutException;
import io.tensorbus.c10d.PeerLostException;
import io.tensorbus.c10d.ReduceOp;
import io.tensorbus.spi.Backend;
import io.tensorbus.spi.BackendOptions;
import io.tensorbus.spi.BackendProvider;
import io.tensorbus.spi.DeviceBuffer;
import io.vertx.core.Future;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;

/**
 * A tcp group beside the NCCL communicator, found by name through the SPI (PyTorch keeps a gloo group beside
 * NCCL for its checks in the same way). NCCL neither checks that ranks call the same collective nor notices a
 * peer that vanished while it waits on a local link, so every collective's fingerprint (what was called, on which
 * dtype, how many elements, which root and reduction) is all-gathered here in parallel with the NCCL work, and
 * every peer is watched by a receive that only a lost connection ends. Either finding goes to {@code onFailure}
 * at once: a {@link CollectiveMismatchException} naming both calls and ranks, or a {@link PeerLostException}
 * naming the peer. The NCCL work itself never waits for these checks.
 */
final class NcclShadow {
    /** The tag of the receives that watch the peers: nothing is ever sent with it. */
    private static final int LIVENESS_TAG = 0;

    private final Backend tcp;
    private final Consumer<CommunicationException> onFailure;
    private volatile boolean closed;

    private NcclShadow(Backend tcp, Consumer<CommunicationException> onFailure) {
        this.tcp = tcp;
        this.onFailure = onFailure;
    }

    /** The shadow of the group {@code options} describes: a tcp group of its own, connected, watching its peers. */
    static Future<NcclShadow> open(BackendOptions options, Consumer<CommunicationException> onFailure) {
        BackendOptions shadow = new BackendOptions(options.rank(), options.worldSize(), options.store(),
                options.timeout(), options.groupName() + "/nccl-checks", options.globalRanks(), options.vertx(),
                options.properties(), options.secret());
        try {
            return BackendProvider.named("tcp").create(shadow).map(tcp -> {
                NcclShadow s = new NcclShadow(tcp, onFailure);
                s.watchPeers();
                return s;
            });
        } catch (RuntimeException e) {
            return Future.failedFuture(e);
        }
    }

    /** A shadow over {@code tcp}, for tests. */
    static NcclShadow over(Backend tcp, Consumer<CommunicationException> onFailure) {
        NcclShadow s = new NcclShadow(tcp, onFailure);
        s.watchPeers();
        return s;
    }

    /**
     * Checks that every rank called the same collective as this one; a mismatch or a lost peer goes to
     * {@code onFailure}. Must be called in collective order.
     */
    void check(Fingerprint mine, long sequence, String group) {
        int n = tcp.size();
        List<DeviceBuffer> rows = new ArrayList<>(n);
        for (int r = 0; r < n; r++) {
            rows.add(row());
        }
        DeviceBuffer own = row();
        mine.writeTo(own.segment());
        tcp.allGather(rows, own).onComplete(ar -> {
            if (ar.failed()) {
                report(ar.cause());
                return;
            }
            for (int r = 0; r < n; r++) {
                Fingerprint theirs = Fingerprint.readFrom(rows.get(r).segment());
                if (!theirs.equals(mine)) {
                    onFailure.accept(new CollectiveMismatchException(group, sequence, "collective mismatch in group '"
                            + group + "' at collective #" + sequence + ": rank " + tcp.rank() + " called "
                            + mine.describe() + " but rank " + r + " called " + theirs.describe()
                            + " (every rank must call the same collectives in the same order)"));
                    return;
                }
            }
        });
    }

    private static DeviceBuffer row() {
        return DeviceBuffer.host(Arena.ofAuto().allocate(8L * Fingerprint.LONGS, 8), DType.INT64, Fingerprint.LONGS);
    }

    private void watchPeers() {
        for (int p = 0; p < tcp.size(); p++) {
            if (p != tcp.rank()) {
                watch(p);
            }
        }
    }

    /** A receive nobody answers: it ends only when peer {@code p}'s connection does (or the group's timeout). */
    private void watch(int p) {
        if (closed) {
            return;
        }
        DeviceBuffer nothing = DeviceBuffer.host(Arena.ofAuto().allocate(1), DType.BOOL, 1);
        tcp.recv(nothing, p, LIVENESS_TAG).onComplete(ar -> {
            if (closed) {
                return;
            }
            if (ar.failed() && ar.cause() instanceof CommunicationTimeoutException) {
                watch(p);
            } else {
                report(ar.failed() ? ar.cause() : new IllegalStateException("rank " + p + " sent on the checks' tag"));
            }
        });
    }

    private void report(Throwable t) {
        if (closed) {
            return;
        }
        onFailure.accept(t instanceof CommunicationException ce ? ce
                : new CommunicationException("nccl-checks", -1, "the nccl backend's checks failed: " + t, t));
    }

    /** Stops watching and closes the tcp group. */
    Future<Void> close() {
        closed = true;
        return tcp.close();
    }

    /**
     * What one rank called, as {@code long}s that travel: the operation, dtype, element count, root and reduction.
     *
     * @param op the operation's name index in {@link #OPS}
     * @param dtype the dtype's ordinal
     * @param numel the element count
     * @param root the root rank, or -1
     * @param reduceOp the reduction's ordinal, or -1
     */
    record Fingerprint(long op, long dtype, long numel, long root, long reduceOp) {
        static final int LONGS = 5;
        static final List<String> OPS = List.of("broadcast", "allReduce", "reduce", "allGather", "gather", "scatter",
                "reduceScatter", "allToAll", "barrier");

        static Fingerprint of(String op, DeviceBuffer buffer, int root, ReduceOp reduceOp) {
            int index = OPS.indexOf(op);
            if (index < 0) {
                throw new IllegalArgumentException("no collective called " + op);
            }
            return new Fingerprint(index, buffer == null ? -1 : buffer.dtype().ordinal(),
                    buffer == null ? -1 : buffer.numel(), root, reduceOp == null ? -1 : reduceOp.code());
        }

        void writeTo(MemorySegment s) {
            long[] v = {op, dtype, numel, root, reduceOp};
            for (int i = 0; i < LONGS; i++) {
                s.setAtIndex(ValueLayout.JAVA_LONG, i, v[i]);
            }
        }

        static Fingerprint readFrom(MemorySegment s) {
            return new Fingerprint(s.getAtIndex(ValueLayout.JAVA_LONG, 0), s.getAtIndex(ValueLayout.JAVA_LONG, 1),
                    s.getAtIndex(ValueLayout.JAVA_LONG, 2), s.getAtIndex(ValueLayout.JAVA_LONG, 3),
                    s.getAtIndex(ValueLayout.JAVA_LONG, 4));
        }

        /** For example {@code allReduce(float32 with 10 elements, SUM)}. */
        String describe() {
            String name = op >= 0 && op < OPS.size() ? OPS.get((int) op) : "op#" + op;
            String type = dtype >= 0 && dtype < DType.values().length ? DType.values()[(int) dtype].toString() : null;
            String what = type == null ? "" : type + " with " + numel + " elements";
            String reduce = reduceOp >= 0 && reduceOp < ReduceOp.Type.values().length
                    ? (what.isEmpty() ? "" : ", ") + ReduceOp.Type.values()[(int) reduceOp] : "";
            String r = root >= 0 ? ((what + reduce).isEmpty() ? "" : ", ") + "root=" + root : "";
            return name + "(" + what + reduce + r + ")";
        }
    }
}
