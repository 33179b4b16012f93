package io.tensorbus.internal.autograd;

import io.tensorbus.autograd.AccumulateGrad;
import io.tensorbus.autograd.Edge;
import io.tensorbus.autograd.Node;
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

/**
 * One backward pass over a graph, as PyTorch's {@code GraphTask}: the dependency count of every node reachable
 * from its roots, the gradients waiting in each node's input buffer, and the nodes ready to run, newest first.
 * {@link Engine#execute} runs one from start to end. Distributed autograd keeps one per context: its
 * dependencies also count from the context's send functions ({@code laterRoots}), whose gradients arrive from
 * other workers after the pass started and are fed in with {@link #feed}. Not thread-safe: one thread at a
 * time runs it (a distributed context serialises its feeds).
 */
public final class GraphTask {
    private final Engine.Options options;
    private final Map<Node, Integer> deps;
    private final Set<Node> needed;
    private final Map<Node, Tensor[]> buffers = new IdentityHashMap<>();
    private final PriorityQueue<Node> ready =
            new PriorityQueue<>(Comparator.comparingLong(Node::sequenceNr).reversed());
    private final Map<Edge, Tensor> captured = new LinkedHashMap<>();
    private final List<Edge> roots;

    /**
     * Counts the dependencies of every node reachable from {@code roots} and from {@code laterRoots}.
     *
     * @param roots the edges the first gradients go to ({@link #run})
     * @param laterRoots nodes whose gradients are fed later ({@link #feed}); what they reach counts too
     * @throws IllegalArgumentException when an edge or a node is null
     */
    public GraphTask(List<Edge> roots, List<Node> laterRoots, Engine.Options options) {
        this.options = Objects.requireNonNull(options, "options");
        this.roots = roots.stream().map(r -> Objects.requireNonNull(r, "a root edge is null")).toList();
        List<Node> starts = new ArrayList<>();
        this.roots.forEach(r -> starts.add(r.node()));
        laterRoots.forEach(n -> starts.add(Objects.requireNonNull(n, "a later root is null")));
        this.deps = countDependencies(starts);
        this.needed = options.captures().isEmpty() ? null : nodesThatReach(deps.keySet(), options.captures());
    }

    /**
     * Puts {@code grads} on the roots and runs every node that becomes ready.
     *
     * @throws IllegalArgumentException when there are not as many gradients as roots
     */
    public void run(List<Tensor> grads) {
        if (roots.size() != grads.size()) {
            throw new IllegalArgumentException("got " + roots.size() + " roots but " + grads.size() + " gradients");
        }
        for (int i = 0; i < roots.size(); i++) {
            addToBuffer(roots.get(i), grads.get(i));
        }
        for (Edge root : roots) {
            if (deps.getOrDefault(root.node(), 0) == 0 && !ready.contains(root.node())) {
                ready.add(root.node());
            }
        }
        drain();
    }

    /**
     * Gives {@code node} (a later root) its input gradients and runs every node that becomes ready, as the
     * distributed engine does when a send function's gradient arrives from another worker.
     *
     * @throws IllegalArgumentException when {@code node} is not part of this pass or {@code grads} does not fit
     *     its inputs
     */
    public void feed(Node node, Tensor[] grads) {
        if (!deps.containsKey(node)) {
            throw new IllegalArgumentException(node.name() + " is not part of this backward pass");
        }
        if (grads.length != node.numInputs()) {
            throw new IllegalArgumentException(node.name() + " takes " + node.numInputs() + " gradients, got "
                    + grads.length);
        }
        for (int i = 0; i < grads.length; i++) {
            if (grads[i] != null) {
                addToBuffer(new Edge(node, i), grads[i]);
            }
        }
        if (deps.getOrDefault(node, 0) == 0 && !ready.contains(node)) {
            ready.add(node);
        }
        drain();
    }

    /** The gradients that arrived at {@link Engine.Options#captures()}, keyed by edge (absent: none arrived). */
    public Map<Edge, Tensor> captured() {
        return captured;
    }

    private void drain() {
        Deque<List<Runnable>> callbacks = Engine.callbacks();
        List<Runnable> queued = new ArrayList<>();
        callbacks.addLast(queued);
        try {
            while (!ready.isEmpty()) {
                Node node = ready.poll();
                Tensor[] in = buffers.remove(node);
                Tensor[] out = run(node, in);
                propagate(node, out);
                if (!options.retainGraph() && out != null) {
                    NodeInternals.releaseVariables(node);
                }
            }
            // Indexed on purpose: a callback may queue more callbacks.
            for (int i = 0; i < queued.size(); i++) {
                queued.get(i).run();
            }
        } finally {
            callbacks.removeLast();
            Engine.clearCallbacksIfIdle();
        }
    }

    private Tensor[] run(Node node, Tensor[] in) {
        if (in == null || allNull(in)) {
            return null;
        }
        if (needed != null) {
            Tensor[] hooked = NodeInternals.callPreHooksOnly(node, in);
            for (Edge e : options.captures()) {
                if (e.node() == node && hooked[e.inputNr()] != null) {
                    captured.put(e, hooked[e.inputNr()]);
                }
            }
            return needed.contains(node) ? NodeInternals.applyWithPostHooks(node, hooked) : null;
        }
        if (node instanceof AccumulateGrad acc && options.accumulator() != null) {
            Tensor[] hooked = NodeInternals.callPreHooksOnly(node, in);
            options.accumulator().accept(acc.variable(), hooked[0]);
            return null;
        }
        return NodeInternals.call(node, in);
    }

    private void propagate(Node node, Tensor[] out) {
        Edge[] edges = NodeInternals.edges(node);
        for (int i = 0; i < edges.length; i++) {
            Edge e = edges[i];
            if (e == null) {
                continue;
            }
            if (out != null && i < out.length && out[i] != null) {
                addToBuffer(e, out[i]);
            }
            int left = deps.merge(e.node(), -1, Integer::sum);
            if (left == 0) {
                ready.add(e.node());
            }
        }
    }

    private void addToBuffer(Edge e, Tensor grad) {
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

    private static Map<Node, Integer> countDependencies(List<Node> starts) {
        Map<Node, Integer> deps = new IdentityHashMap<>();
        Set<Node> seen = Collections.newSetFromMap(new IdentityHashMap<>());
        Deque<Node> stack = new ArrayDeque<>();
        for (Node start : starts) {
            if (seen.add(start)) {
                stack.push(start);
            }
        }
        while (!stack.isEmpty()) {
            for (Edge e : NodeInternals.edges(stack.pop())) {
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
    private static Set<Node> nodesThatReach(Set<Node> all, List<Edge> captures) {
        Map<Node, List<Node>> parents = new IdentityHashMap<>();
        for (Node n : all) {
            for (Edge e : NodeInternals.edges(n)) {
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
