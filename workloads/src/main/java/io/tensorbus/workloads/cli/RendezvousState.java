package io.tensorbus.workloads.cli;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * The state of an elastic job's rendezvous, as torchrun's dynamic rendezvous keeps it: the round, whether it is
 * complete, its participants (in rank order once complete), the nodes waiting to be admitted to the next round,
 * the last-call deadline, and why the rendezvous was closed. Stored as JSON under one key and changed by
 * compare-and-set; {@code version} grows with every change, so that no two states are equal bytes.
 *
 * @param version the count of changes
 * @param round the round, from 0
 * @param complete true once the round's participants are fixed
 * @param participants the nodes of the round: in join order while it is open, sorted (their ranks) once complete
 * @param waiting nodes that arrived after the round completed, to be admitted at the next one
 * @param lastCall when the open round closes ({@link System#currentTimeMillis()}), or 0 before it has its minimum
 * @param closed why the job's rendezvous was closed (it ended, or failed for good), or null while it runs
 */
record RendezvousState(long version, int round, boolean complete, List<String> participants, List<String> waiting,
        long lastCall, String closed) {

    /** The state before any node came. */
    static RendezvousState initial() {
        return new RendezvousState(0, 0, false, List.of(), List.of(), 0, null);
    }

    /** Reads a state; a malformed one is a bug of some node, said naming it. */
    static RendezvousState decode(byte[] bytes) {
        try {
            JsonObject j = new JsonObject(new String(bytes, StandardCharsets.UTF_8));
            return new RendezvousState(j.getLong("version"), j.getInteger("round"), j.getBoolean("complete"),
                    strings(j.getJsonArray("participants")), strings(j.getJsonArray("waiting")), j.getLong("lastCall"),
                    j.getString("closed"));
        } catch (RuntimeException e) {
            throw new IllegalStateException("the rendezvous state is malformed (" + e.getMessage() + "): a node of"
                    + " another tensorbus version, or another program, wrote it", e);
        }
    }

    byte[] encode() {
        return new JsonObject().put("version", version).put("round", round).put("complete", complete)
                .put("participants", new JsonArray(participants)).put("waiting", new JsonArray(waiting))
                .put("lastCall", lastCall).put("closed", closed).encode().getBytes(StandardCharsets.UTF_8);
    }

    /** This state with {@code node} among the participants of the open round. */
    RendezvousState joined(String node, int maxNodes, int minNodes, long now, long lastCallMillis) {
        List<String> p = new ArrayList<>(participants);
        p.add(node);
        long deadline = lastCall == 0 && p.size() >= minNodes ? now + lastCallMillis : lastCall;
        RendezvousState s = new RendezvousState(version + 1, round, false, List.copyOf(p), without(waiting, node),
                deadline, closed);
        return p.size() >= maxNodes ? s.completed() : s;
    }

    /** This state with the open round complete: the participants sorted, which gives their ranks. */
    RendezvousState completed() {
        List<String> p = new ArrayList<>(participants);
        p.sort(null);
        return new RendezvousState(version + 1, round, true, List.copyOf(p), waiting, 0, closed);
    }

    /** This state with {@code node} waiting for the next round. */
    RendezvousState waitingFor(String node) {
        List<String> w = new ArrayList<>(waiting);
        w.add(node);
        return new RendezvousState(version + 1, round, complete, participants, List.copyOf(w), lastCall, closed);
    }

    /** This state with {@code node} out of the open round (it went quiet before the round completed). */
    RendezvousState without(String node) {
        return new RendezvousState(version + 1, round, complete, without(participants, node), without(waiting, node),
                lastCall, closed);
    }

    /** The next round, open and empty: every node, waiting or not, joins it anew. */
    RendezvousState nextRound() {
        return new RendezvousState(version + 1, round + 1, false, List.of(), List.of(), 0, closed);
    }

    /** This state closed for {@code why}. */
    RendezvousState closedFor(String why) {
        return new RendezvousState(version + 1, round, complete, participants, waiting, lastCall, why);
    }

    private static List<String> without(List<String> nodes, String node) {
        List<String> rest = new ArrayList<>(nodes);
        rest.remove(node);
        return List.copyOf(rest);
    }

    private static List<String> strings(JsonArray a) {
        List<String> out = new ArrayList<>();
        for (int i = 0; i < a.size(); i++) {
            out.add(a.getString(i));
        }
        return List.copyOf(out);
    }
}
