package io.tensorbus.distributed;

import static io.tensorbus.distributed.impl.TensorBuffers.readUntilDone;

import io.tensorbus.distributed.impl.TensorBuffers;
import io.tensorbus.internal.distributed.Blocking;
import io.tensorbus.internal.distributed.Meters;
import io.tensorbus.spi.Backend;
import io.tensorbus.spi.DeviceBuffer;
import io.tensorbus.tensor.Tensor;
import io.vertx.core.Future;

/**
 * The point-to-point messages of a {@link ProcessGroup}, behind its {@code isend}, {@code irecv}, {@code send} and
 * {@code recv}: the checks of peers and tags, the non-member rule, the flight recorder, and the blocking receive's
 * poll on the caller's thread. Peers arrive as group ranks; answers are global ranks.
 */
final class GroupPointToPoint {
    /**
     * How long a blocking receive polls on its own thread before it hands the receive to the backend's event
     * loop, in nanoseconds ({@code -Dtensorbus.recvPollMicros}, 0 turns it off).
     */
    private static final long RECV_POLL_NANOS = Math.max(0, Long.getLong("tensorbus.recvPollMicros", 1000)) * 1000;

    private GroupPointToPoint() {
    }

    static Future<Void> isend(ProcessGroup g, Tensor tensor, GroupRank dst, int tag) {
        if (g.outside("isend")) {
            return Future.succeededFuture();
        }
        Backend b = g.member();
        g.members().checkPeer(dst, "dst", g.rank());
        checkTag(tag);
        DeviceBuffer buf = TensorBuffers.of(tensor, "tensor");
        int global = g.members().global(dst.rank());
        return readUntilDone(g.flightRecorder().p2p("send", global, () -> b.send(buf, dst.rank(), tag), buf), tensor);
    }

    static Future<Integer> irecv(ProcessGroup g, Tensor tensor, GroupRank src, int tag) {
        if (g.outside("irecv")) {
            return Future.succeededFuture(-1);
        }
        g.member();
        g.members().checkPeer(src, "src", g.rank());
        return irecvFrom(g, tensor, src.rank(), tag);
    }

    static Future<Integer> irecvFromAny(ProcessGroup g, Tensor tensor, int tag) {
        if (g.outside("irecv")) {
            return Future.succeededFuture(-1);
        }
        return irecvFrom(g, tensor, ProcessGroup.ANY_SOURCE, tag);
    }

    /**
     * The blocking receive from {@code src}: a message that arrives within {@link #RECV_POLL_NANOS} is taken on this
     * thread where the backend can (shared memory), sparing two thread hand-offs; else it waits for
     * {@link #irecvFrom}.
     */
    static int recv(ProcessGroup g, Tensor tensor, GroupRank src, int tag) {
        if (g.outside("recv")) {
            return -1;
        }
        Backend b = g.member();
        g.members().checkPeer(src, "src", g.rank());
        String what = "recv from rank " + g.members().global(src.rank());
        Blocking.checkMayBlock(what);
        checkTag(tag);
        if (RECV_POLL_NANOS > 0) {
            long begin = Meters.start();
            long timelineBegin = g.flightRecorder().timelineNow();
            DeviceBuffer buf = TensorBuffers.of(tensor, "tensor");
            int from = b.tryRecvOnCallerThread(buf, src.rank(), tag, RECV_POLL_NANOS);
            if (from >= 0) {
                g.flightRecorder().received(begin, timelineBegin, g.members().global(from), buf);
                TensorBuffers.written(tensor);
                return g.members().global(from);
            }
        }
        return Blocking.await(irecvFrom(g, tensor, src.rank(), tag), g.blockingDeadline(), what);
    }

    static int recvFromAny(ProcessGroup g, Tensor tensor, int tag) {
        if (g.outside("recv")) {
            return -1;
        }
        Blocking.checkMayBlock("recv from any rank");
        return Blocking.await(irecvFromAny(g, tensor, tag), g.blockingDeadline(), "recv from any rank");
    }

    /** Receives from group rank {@code src} (or any) and answers the sender's global rank. */
    private static Future<Integer> irecvFrom(ProcessGroup g, Tensor tensor, int src, int tag) {
        Backend b = g.member();
        checkTag(tag);
        DeviceBuffer buf = TensorBuffers.of(tensor, "tensor");
        Membership members = g.members();
        int peer = src < 0 ? -1 : members.global(src);
        return g.flightRecorder().p2p("recv", peer, () -> b.recv(buf, src, tag), buf).map(from -> {
            TensorBuffers.written(tensor);
            return members.global(from);
        });
    }

    private static void checkTag(int tag) {
        if (tag < 0) {
            throw new IllegalArgumentException("tag=" + tag + " must be >= 0 (negative tags are reserved)");
        }
    }
}
