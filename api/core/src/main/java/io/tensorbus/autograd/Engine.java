package io.tensorbus.autograd;

import io.tensorbus.tensor.Tensor;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.Deque;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.PriorityQueue;
import java.util.Set;
import java.util.function.BiConsumer;

/**
 * Runs the backward graph: counts the dependencies of every node reachable from the roots, then runs
 * each node once all its gradients have arrived, newest first (as PyTorch's CPU engine).
 *
 * <p>{@link #execute} is the general entry point that distributed autograd builds on: several roots with
 * injected gradients, gradients captured at chosen edges instead of accumulated, and leaf gradients sent
 * to a caller-supplied accumulator instead of {@code .grad}.
 */
public final class Engine {
    /** Callbacks of the {@link #execute} calls running on this thread, outermost first; only the first gets any. */
    private static final ThreadLocal<Deque<List<Runnable>>> CALLBACKS = ThreadLocal.withInitial(ArrayDeque::new);

    private Engine() {
    }

    /**
     * Queues {@code callback} to run once the backward pass running on this thread has finished all its
     * nodes, before {@code backward()} returns (PyTorch's {@code Engine.queue_callback}). This is how
     * DistributedDataParallel waits for its last buckets: a hook cannot wait inside the pass, because nodes
     * still to run would be delayed. When passes nest (a node that runs backward itself, as activation
     * checkpointing does), the callback belongs to the outermost pass: it runs once everything that pass
     * started is done. Callbacks run in the order queued and may queue further callbacks; an exception from
     * one ends the pass with that exception, and the callbacks after it do not run.
     *
     * @throws IllegalStateException when no backward pass is running on this thread
     */
    public static void queueCallback(Runnable callback) {
        Objects.requireNonNull(callback, "callback");
        List<Runnable> outermost = CALLBACKS.get().peekFirst();
        if (outermost == null) {
            throw new IllegalStateException("queueCallback is only allowed while a backward pass runs on this thread"
                    + " (from a hook or a node)");
        }
        outermost.add(callback);
    }

    /**
     * What one run of the engine does besides computing gradients.
     *
     * @param retainGraph keep saved tensors so that the graph can be run again
     * @param accumulator when non-null, receives (leaf, gradient) instead of adding into {@code leaf.grad()}
     * @param captures edges whose arriving gradients are returned; when non-empty, only the nodes needed to
     *     reach them run and no {@code .grad} is touched
     */
    public record Options(boolean retainGraph, BiConsumer<Tensor, Tensor> accumulator, List<Edge> captures) {
        /** Checks the arguments and copies the capture list. */
        public Options {
            captures = captures == null ? List.of() : List.copyOf(captures);
        }
    }

    /**
     * Runs backward from {@code roots} with the given gradients.
     *
     * @return the gradients that arrived at {@link Options#captures()}, keyed by edge (absent: none arrived)
     * @throws IllegalArgumentException when the lists differ in length or an edge is null
     */
    public static Map<Edge, Tensor> execute(List<Edge> roots, List<Tensor> grads, Options options) {
        Objects.requireNonNull(options, "options");
        if (roots.size() != grads.size()) {
            throw new IllegalArgumentException("got " + roots.size() + " roots but " + grads.size() + " gradients");
        }
        Map<Node, Integer> deps = countDependencies(roots);
        Set<Node> needed = options.captures().isEmpty() ? null : nodesThatReach(deps.keySet(), roots, options.captures());
        Map<Node, Tensor[]> buffers = new IdentityHashMap<>();
        for (int i = 0; i < roots.size(); i++) {
            Edge root = Objects.requireNonNull(roots.get(i), "root edge " + i);
            addToBuffer(buffers, root, grads.get(i));
        }
        PriorityQueue<Node> ready = new PriorityQueue<>(Comparator.comparingLong(Node::sequenceNr).reversed());
        for (Edge root : roots) {
            if (deps.getOrDefault(root.node(), 0) == 0 && !ready.contains(root.node())) {
                ready.add(root.node());
            }
        }
        Map<Edge, Tensor> captured = new LinkedHashMap<>();
        Deque<List<Runnable>> callbacks = CALLBACKS.get();
        List<Runnable> queued = new ArrayList<>();
        callbacks.addLast(queued);
        try {
            while (!ready.isEmpty()) {
                Node node = ready.poll();
                Tensor[] in = buffers.remove(node);
                Tensor[] out = run(node, in, options, needed, captured);
                propagate(node, out, deps, buffers, ready);
                if (!options.retainGraph() && out != null) {
                    node.releaseVariables();
                }
            }
            // Indexed on purpose: a callback may queue more callbacks.
            for (int i = 0; i < queued.size(); i++) {
                queued.get(i).run();
            }
        } finally {
            callbacks.removeLast();
            if (callbacks.isEmpty()) {
                CALLBACKS.remove();
            }
        }
        return captured;
    }

    private static Tensor[] run(Node node, Tensor[] in, Options options, Set<Node> needed, Map<Edge, Tensor> captured) {
        if (in == null || allNull(in)) {
            return null;
        }
        if (needed != null) {
            Tensor[] hooked = node.callPreHooksOnly(in);
            for (Edge e : options.captures()) {
                if (e.node() == node && hooked[e.inputNr()] != null) {
                    captured.put(e, hooked[e.inputNr()]);
                }
            }
            return needed.contains(node) ? node.applyWithPostHooks(hooked) : null;
        }
        if (node instanceof AccumulateGrad acc && options.accumulator() != null) {
            Tensor[] hooked = node.callPreHooksOnly(in);
            options.accumulator().accept(acc.variable(), hooked[0]);
            return null;
        }
        return node.call(in);
    }

    private static void propagate(Node node, Tensor[] out, Map<Node, Integer> deps, Map<Node, Tensor[]> buffers,
            PriorityQueue<Node> ready) {
        Edge[] edges = node.edges();
        for (int i = 0; i < edges.length; i++) {
            Edge e = edges[i];
            if (e == null) {
                continue;
            }
            if (out != null && i < out.length && out[i] != null) {
                addToBuffer(buffers, e, out[i]);
            }
            int left = deps.merge(e.node(), -1, Integer::sum);
            if (left == 0) {
                ready.add(e.node());
            }
        }
    }

    private static void addToBuffer(Map<Node, Tensor[]> buffers, Edge e, Tensor grad) {
        Tensor[] buf = buffers.computeIfAbsent(e.node(), n -> new Tensor[n.numInputs()]);
        Tensor old = buf[e.inputNr()];
        buf[e.inputNr()] = old == null ? grad : old.add(grad);
    }

    private static boolean allNull(Tensor[] in) {
        for (Tensor t : in) {
            if (t != null) {
                return false;
            }
        }
        return true;
    }

    private static Map<Node, Integer> countDependencies(List<Edge> roots) {
        Map<Node, Integer> deps = new IdentityHashMap<>();
        Set<Node> seen = Collections.newSetFromMap(new IdentityHashMap<>());
        Deque<Node> stack = new ArrayDeque<>();
        for (Edge r : roots) {
            if (r != null && seen.add(r.node())) {
                stack.push(r.node());
            }
        }
        while (!stack.isEmpty()) {
            for (Edge e : stack.pop().edges()) {
                if (e != null) {
                    deps.merge(e.node(), 1, Integer::sum);
                    if (seen.add(e.node())) {
                        stack.push(e.node());
                    }
                }
            }
        }
        for (Node n : seen) {
            deps.putIfAbsent(n, 0);
        }
        return deps;
    }

    /** Nodes with a path of at least one edge to a capture: the ones that must run to fill the captures. */
    private static Set<Node> nodesThatReach(Set<Node> all, List<Edge> roots, List<Edge> captures) {
        Map<Node, List<Node>> parents = new IdentityHashMap<>();
        for (Node n : all) {
            for (Edge e : n.edges()) {
                if (e != null) {
                    parents.computeIfAbsent(e.node(), k -> new ArrayList<>()).add(n);
                }
            }
        }
        Set<Node> needed = Collections.newSetFromMap(new IdentityHashMap<>());
        Deque<Node> stack = new ArrayDeque<>();
        for (Edge c : captures) {
            stack.push(c.node());
        }
        while (!stack.isEmpty()) {
            for (Node p : parents.getOrDefault(stack.pop(), List.of())) {
                if (needed.add(p)) {
                    stack.push(p);
                }
            }
        }
        return needed;
    }
}
