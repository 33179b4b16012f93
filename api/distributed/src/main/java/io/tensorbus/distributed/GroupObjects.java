package io.tensorbus.distributed;

import io.tensorbus.distributed.impl.ObjectCollectives;
import io.tensorbus.spi.Backend;
import io.vertx.core.Future;
import java.util.List;

/**
 * The object collectives of a {@link ProcessGroup} ({@code all_gather_object}, {@code broadcast_object_list}...),
 * behind its methods of those names: the group's checks of ranks and lists, the non-member rule, the flight
 * recorder. Encoding and the messages themselves are {@link ObjectCollectives}'.
 */
final class GroupObjects {
    /** The tag of object-list messages, apart from tensors' (tags below 0 are the group's). */
    private static final int OBJECT_LIST_TAG = -4;

    private GroupObjects() {
    }

    static Future<List<Object>> allGather(ProcessGroup g, Object object) {
        if (g.outside("allGatherObject")) {
            return Future.succeededFuture(null);
        }
        Backend b = g.memberForHostMessages("allGatherObject");
        return g.flightRecorder().collective("allGatherObject", () -> ObjectCollectives.allGather(b, object));
    }

    static Future<List<Object>> broadcastList(ProcessGroup g, List<Object> objects, GroupRank src) {
        if (g.outside("broadcastObjectList")) {
            return Future.succeededFuture(null);
        }
        Backend b = g.memberForHostMessages("broadcastObjectList");
        g.members().checkRank(src, "src");
        requireList(objects);
        return g.flightRecorder().collective("broadcastObjectList",
                () -> ObjectCollectives.broadcastList(b, objects, src.rank()));
    }

    static Future<List<Object>> gather(ProcessGroup g, Object object, GroupRank dst) {
        if (g.outside("gatherObject")) {
            return Future.succeededFuture(null);
        }
        Backend b = g.memberForHostMessages("gatherObject");
        g.members().checkRank(dst, "dst");
        return g.flightRecorder().collective("gatherObject", () -> ObjectCollectives.gather(b, object, dst.rank()));
    }

    static Future<List<Object>> scatterList(ProcessGroup g, List<Object> output, List<Object> inputs, GroupRank src) {
        if (g.outside("scatterObjectList")) {
            return Future.succeededFuture(null);
        }
        Backend b = g.memberForHostMessages("scatterObjectList");
        g.members().checkRank(src, "src");
        if (output == null || output.isEmpty()) {
            throw new IllegalArgumentException("output must be a list of at least one element (the first receives"
                    + " the object)");
        }
        if (g.rank() == src.rank() && (inputs == null || inputs.size() != g.size())) {
            throw new IllegalArgumentException("inputs holds " + (inputs == null ? "nothing" : inputs.size()
                    + " objects") + "; rank " + g.members().global(src.rank()) + " must pass one per rank (" + g.size()
                    + ")");
        }
        Future<Object> work = g.flightRecorder().collective("scatterObjectList",
                () -> ObjectCollectives.scatter(b, inputs, src.rank()));
        return work.map(o -> {
            output.set(0, o);
            return output;
        });
    }

    static Future<Void> sendList(ProcessGroup g, List<Object> objects, GroupRank dst) {
        if (g.outside("sendObjectList")) {
            return Future.succeededFuture();
        }
        Backend b = g.memberForHostMessages("sendObjectList");
        g.members().checkPeer(dst, "dst", g.rank());
        requireList(objects);
        return ObjectCollectives.sendList(b, objects, dst.rank(), OBJECT_LIST_TAG);
    }

    static Future<Integer> recvList(ProcessGroup g, List<Object> objects, GroupRank src) {
        if (g.outside("recvObjectList")) {
            return Future.succeededFuture(-1);
        }
        g.member();
        g.members().checkPeer(src, "src", g.rank());
        return recv(g, objects, src.rank());
    }

    static Future<Integer> recvListFromAny(ProcessGroup g, List<Object> objects) {
        if (g.outside("recvObjectList")) {
            return Future.succeededFuture(-1);
        }
        return recv(g, objects, ProcessGroup.ANY_SOURCE);
    }

    /** Receives from group rank {@code groupSrc} (or any) and answers the sender's global rank. */
    private static Future<Integer> recv(ProcessGroup g, List<Object> objects, int groupSrc) {
        Backend b = g.memberForHostMessages("recvObjectList");
        requireList(objects);
        return ObjectCollectives.recvList(b, objects, groupSrc, OBJECT_LIST_TAG).map(g::globalRank);
    }

    private static void requireList(List<Object> objects) {
        if (objects == null) {
            throw new NullPointerException("objects must not be null");
        }
    }
}
