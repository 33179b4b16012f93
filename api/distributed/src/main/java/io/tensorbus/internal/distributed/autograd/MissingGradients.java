package io.tensorbus.internal.distributed.autograd;

import io.tensorbus.distributed.autograd.DistAutogradException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.StringJoiner;
import java.util.TreeMap;
import java.util.function.IntFunction;

/**
 * The send functions of one backward pass that got no gradient, by worker. Every worker answers a propagate call
 * with what it has not fed yet, merged with the answers of the calls it made in turn; a worker's set only shrinks as
 * the pass goes on, so the intersection of its reports is what it never fed. A send function that is counted and
 * never fed holds back a dependency, so a gradient of the graph is missing: the pass fails rather than return it
 * (PyTorch's FAST mode waits for it until the RPC timeout instead).
 *
 * <p>Wire form: {@code [[worker, [messageId, what, messageId, what, ...]], ...]}. Not thread-safe.
 */
final class MissingGradients {
    /** How many sends an error names before it says how many more there were. */
    private static final int NAMED = 4;

    private final Map<Integer, Map<Long, String>> byWorker = new TreeMap<>();

    /** Adds what {@code worker} reported it has not fed ({@code messageId -> what the message is}). */
    void report(int worker, Map<Long, String> unfed) {
        byWorker.merge(worker, new LinkedHashMap<>(unfed), (known, later) -> {
            known.keySet().retainAll(later.keySet());
            return known;
        });
    }

    /** Adds everything {@code other} holds. */
    void addAll(MissingGradients other) {
        other.byWorker.forEach(this::report);
    }

    /**
     * Adds the reports of a propagate call's answer.
     *
     * @throws IllegalArgumentException when {@code wire} is not the wire form, naming {@code from}
     */
    void merge(Object wire, String from) {
        if (!(wire instanceof List<?> workers)) {
            throw malformed(from);
        }
        for (Object w : workers) {
            if (!(w instanceof List<?> entry) || entry.size() != 2 || !(entry.get(0) instanceof Long worker)
                    || !(entry.get(1) instanceof List<?> sends) || sends.size() % 2 != 0) {
                throw malformed(from);
            }
            Map<Long, String> unfed = new LinkedHashMap<>();
            for (int i = 0; i < sends.size(); i += 2) {
                if (!(sends.get(i) instanceof Long id) || !(sends.get(i + 1) instanceof String what)) {
                    throw malformed(from);
                }
                unfed.put(id, what);
            }
            report(Math.toIntExact(worker), unfed);
        }
    }

    /** The wire form of everything reported so far. */
    List<Object> toWire() {
        List<Object> out = new ArrayList<>();
        byWorker.forEach((worker, unfed) -> {
            List<Object> sends = new ArrayList<>();
            unfed.forEach((id, what) -> {
                sends.add(id);
                sends.add(what);
            });
            out.add(List.of((long) worker, sends));
        });
        return out;
    }

    /**
     * Fails when any worker reported a send function it never fed.
     *
     * @param describe names a worker id in messages
     * @throws DistAutogradException naming the messages, where they were recorded, and what to do
     */
    void check(long contextId, boolean smart, IntFunction<String> describe) {
        StringJoiner named = new StringJoiner("; ");
        int count = 0;
        for (Map.Entry<Integer, Map<Long, String>> e : byWorker.entrySet()) {
            for (String what : e.getValue().values()) {
                if (count++ < NAMED) {
                    named.add(what + " (recorded on " + describe.apply(e.getKey()) + ")");
                }
            }
        }
        if (count == 0) {
            return;
        }
        String more = count > NAMED ? " and " + (count - NAMED) + " more" : "";
        String why = smart ? "SMART mode found these messages reachable from the roots, yet none came back: this is a "
                + "bug of tensorbus, please report it."
                : "FAST mode counts every send function of the context as a dependency of the tensors it sent, so a "
                + "tensor that also went into an RPC whose result does not reach the roots never gets its whole "
                + "gradient. Run backward with DistAutograd.Mode.SMART, which finds the RPCs that reach the roots, or "
                + "make only RPCs whose results are used inside the context.";
        throw new DistAutogradException("the backward pass of distributed autograd context "
                + ContextContainer.describe(contextId) + " ended with gradients missing: no gradient came back for "
                + named + more + ". " + why, null);
    }

    private static IllegalArgumentException malformed(String from) {
        return new IllegalArgumentException("a malformed answer to " + DistEngine.PROPAGATE + " from worker " + from);
    }
}
