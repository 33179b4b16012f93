package io.tensorbus.internal.distributed.autograd;

import io.tensorbus.autograd.Autograd;
import io.tensorbus.autograd.Edge;
import io.tensorbus.internal.autograd.Engine;
import io.tensorbus.internal.autograd.GraphTask;
import io.tensorbus.autograd.Node;
import io.tensorbus.distributed.autograd.DistAutogradException;
import io.tensorbus.internal.distributed.Blocking;
import io.tensorbus.tensor.Tensor;
import io.vertx.core.Future;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.Deque;
import java.util.HashSet;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * PyTorch's {@code DistEngine}: runs a context's backward pass on this worker. In FAST mode (the seed's 5.2) the
 * worker that starts it counts dependencies from the roots and from every send function of the context, then runs
 * its local graph; each recv function reached ships its gradients to the worker that sent the tensors
 * ({@value #PROPAGATE}), which, on first contact with this pass, counts its own dependencies the same way and
 * feeds the gradients to the send function of that message. A worker answers a propagate call once everything
 * that gradient started there has finished, its own propagate calls included, so the pass is done when the
 * starting worker's graph is idle and its propagate calls have been answered.
 *
 * <p>SMART mode (the seed's 5.3) first discovers which send functions the roots reach ({@value #DISCOVER}): the
 * starting worker walks its graph from the roots, asks the sender of every recv function it reaches to walk on from
 * the matching send function, and so on across workers; a worker answers once the walks it started have been
 * answered. Each worker's pass then counts dependencies only from the send functions found, so those the roots do
 * not reach hold nothing back.
 */
final class DistEngine {
    /** {@code [contextId, messageId, passId, retainGraph, [grads...]]}: gradients for a send function. */
    static final String PROPAGATE = "tensorbus.dist_autograd.propagate";
    /** {@code [contextId, passId, [messageIds]]}: walk on from these send functions (SMART mode). */
    static final String DISCOVER = "tensorbus.dist_autograd.discover";

    private final AutogradTransport transport;
    private final ContextContainer container;
    private final AtomicInteger outstanding = new AtomicInteger();

    DistEngine(AutogradTransport transport, ContextContainer container) {
        this.transport = transport;
        this.container = container;
    }

    /**
     * One backward pass on one worker: its graph task, the send functions it counts and those fed so far, and the
     * propagate calls its last step issued. Guarded by the context's monitor.
     */
    static final class Pass {
        private final long id;
        private final boolean retainGraph;
        private final boolean initiator;
        private final GraphTask task;
        private final List<SendBackward> counted;
        private final Set<Long> fed = new HashSet<>();
        private List<Future<Object>> issued = new ArrayList<>();

        Pass(long id, boolean retainGraph, boolean initiator, GraphTask task, List<SendBackward> counted) {
            this.id = id;
            this.retainGraph = retainGraph;
            this.initiator = initiator;
            this.task = task;
            this.counted = counted;
        }

        /** The counted send functions not fed yet: message id to what the message is. */
        Map<Long, String> unfed() {
            Map<Long, String> out = new LinkedHashMap<>();
            for (SendBackward s : counted) {
                if (!fed.contains(s.messageId())) {
                    out.put(s.messageId(), s.what());
                }
            }
            return out;
        }

        /** The propagate calls issued since the last call, for the caller to wait on. */
        List<Future<Object>> takeIssued() {
            List<Future<Object>> out = issued;
            issued = new ArrayList<>();
            return out;
        }
    }

    /** What SMART mode's discovery learnt on one worker for one pass. Guarded by its monitor. */
    static final class Discovery {
        /** The send functions of this worker that the roots reach, by message id. */
        private final Set<Long> reachedSends = new HashSet<>();
        /** The recv functions whose senders were asked to walk on. */
        private final Set<Long> askedRecvs = new HashSet<>();

        synchronized boolean reach(long messageId) {
            return reachedSends.add(messageId);
        }

        synchronized boolean ask(long messageId) {
            return askedRecvs.add(messageId);
        }

        synchronized Set<Long> reachedSends() {
            return Set.copyOf(reachedSends);
        }
    }

    /** What a step of a pass left to wait for: the propagate calls it issued and what it had not fed then. */
    private record Step(List<Future<Object>> issued, Map<Long, String> unfed) {
    }

    /** Propagate calls sent and not yet answered (PyTorch's {@code num_outstanding_rpcs}). */
    int outstanding() {
        return outstanding.get();
    }

    /**
     * Starts a backward pass of {@code context} from {@code roots} on this worker; the future completes when every
     * worker's part has.
     *
     * @throws IllegalArgumentException for no roots, or a root that does not require grad or is not a scalar
     */
    Future<Void> backward(DistAutogradContext context, List<Tensor> roots, boolean retainGraph, boolean smart,
                          boolean inline) {
        List<Edge> edges = rootEdges(roots);
        long passId = container.newMessageId();
        List<Tensor> ones = roots.stream().map(r -> Tensor.ones(r.dtype(), r.shape())).toList();
        List<Node> starts = edges.stream().map(Edge::node).toList();
        Future<Started> started;
        if (inline) {
            // The caller waits anyway: its thread runs the local graph, which saves two thread hand-offs a step.
            if (smart) {
                Blocking.await(walk(context, passId, starts), transport.timeout(), "the discovery of distributed "
                        + "autograd context " + ContextContainer.describe(context.id()));
            }
            started = Future.succeededFuture(start(context, passId, retainGraph, edges, ones));
        } else {
            Future<Void> discovered = smart ? transport.onPool(() -> walk(context, passId, starts)).compose(f -> f)
                    : Future.succeededFuture();
            started = discovered.compose(v -> transport.onPool(() -> start(context, passId, retainGraph, edges, ones)));
        }
        return started.compose(begun -> finish(context, begun, smart)).onComplete(r -> end(context, passId));
    }

    /**
     * The starting worker's pass and the propagate calls its local graph issued, taken under the context's monitor
     * as the graph ran: taken any later, a propagate call that another worker's answer brings here first would take
     * them, wait on them while they wait on it, and leave them unanswered until the timeout.
     */
    private record Started(Pass pass, List<Future<Object>> issued) {
    }

    /**
     * Waits for the propagate calls of the starting worker's pass, then fails the pass when a send function on any
     * worker it reached got no gradient.
     */
    private Future<Void> finish(DistAutogradContext context, Started started, boolean smart) {
        Pass pass = started.pass();
        return gather(started.issued()).map(missing -> {
            synchronized (context) {
                // Its own sends were fed by the propagate calls of other workers, all answered by now.
                missing.report(transport.self(), pass.unfed());
            }
            missing.check(context.id(), smart, transport::describe);
            return null;
        });
    }

    /** Begins the starting worker's pass and runs its local graph. */
    private Started start(DistAutogradContext context, long passId, boolean retainGraph, List<Edge> edges,
                          List<Tensor> ones) {
        synchronized (context) {
            context.checkLive();
            if (context.pass != null && context.pass.initiator) {
                throw new IllegalStateException("a backward pass of distributed autograd context "
                        + ContextContainer.describe(context.id()) + " is running already");
            }
            Pass pass = begin(context, passId, retainGraph, true, edges);
            try {
                pass.task.run(ones);
            } catch (RuntimeException | Error e) {
                context.pass = null;
                throw e;
            }
            return new Started(pass, pass.takeIssued());
        }
    }

    /**
     * Serves {@value #DISCOVER}: walks on from the send functions {@code caller}'s recv functions reached; the
     * future completes once every worker this walk asked has answered.
     */
    @SuppressWarnings("unchecked")
    Future<Object> discover(int caller, List<Object> args) {
        if (args.size() != 3 || !(args.get(0) instanceof Long contextId) || !(args.get(1) instanceof Long passId)
                || !(args.get(2) instanceof List<?> ids)) {
            return Future.failedFuture(new IllegalArgumentException("a malformed " + DISCOVER + " from worker "
                    + transport.describe(caller)));
        }
        DistAutogradContext context = container.retrieve(contextId);
        Discovery discovery = context.discovery(passId);
        List<Node> starts = new ArrayList<>();
        for (Object id : (List<Object>) ids) {
            if (!(id instanceof Long messageId)) {
                return Future.failedFuture(new IllegalArgumentException("a message id that is not a long"));
            }
            SendBackward send = context.send(messageId);
            if (discovery.reach(messageId)) {
                starts.add(send);
            }
        }
        return transport.onPool(() -> walk(context, passId, starts)).compose(f -> f).map(v -> null);
    }

    /**
     * Walks this worker's graph from {@code starts} and asks the sender of every recv function reached for the
     * first time in this pass to walk on; completes when they have answered.
     */
    private Future<Void> walk(DistAutogradContext context, long passId, List<Node> starts) {
        Discovery discovery = context.discovery(passId);
        Map<Integer, List<Long>> ask = new TreeMap<>();
        Set<Node> seen = Collections.newSetFromMap(new IdentityHashMap<>());
        Deque<Node> stack = new ArrayDeque<>();
        starts.forEach(n -> {
            if (seen.add(n)) {
                stack.push(n);
            }
        });
        while (!stack.isEmpty()) {
            Node n = stack.pop();
            if (n instanceof RecvBackward r && discovery.ask(r.messageId())) {
                ask.computeIfAbsent(r.sender(), w -> new ArrayList<>()).add(r.messageId());
            }
            for (Edge e : n.nextEdges()) {
                if (e != null && seen.add(e.node())) {
                    stack.push(e.node());
                }
            }
        }
        List<Future<Object>> asked = new ArrayList<>();
        ask.forEach((worker, ids) -> asked.add(transport.call(worker, DISCOVER, List.of(context.id(), passId, ids))
                .recover(e -> Future.failedFuture(new DistAutogradException("the discovery of distributed autograd "
                        + "context " + ContextContainer.describe(context.id()) + " failed on worker "
                        + transport.describe(worker) + ": " + e.getMessage(), e)))));
        return allOf(asked);
    }

    /**
     * Serves {@value #PROPAGATE}: feeds gradients that {@code caller}'s recv function shipped to the send function
     * of their message; the future completes once everything they started here has finished.
     *
     * @throws IllegalArgumentException (as a failed future) for a malformed request, an unknown context or message
     */
    @SuppressWarnings("unchecked")
    Future<Object> propagate(int caller, List<Object> args) {
        if (args.size() != 5 || !(args.get(0) instanceof Long contextId) || !(args.get(1) instanceof Long messageId)
                || !(args.get(2) instanceof Long passId) || !(args.get(3) instanceof Boolean retainGraph)
                || !(args.get(4) instanceof List<?> list)) {
            return Future.failedFuture(new IllegalArgumentException("a malformed " + PROPAGATE + " from worker "
                    + transport.describe(caller)));
        }
        DistAutogradContext context = container.retrieve(contextId);
        return transport.onPool(() -> {
            synchronized (context) {
                context.checkLive();
                Pass pass = context.pass;
                if (pass == null || pass.id != passId) {
                    pass = begin(context, passId, retainGraph, false, List.of());
                }
                SendBackward send = context.send(messageId);
                if (send.to() != caller) {
                    throw new IllegalArgumentException("worker " + transport.describe(caller) + " sent gradients for"
                            + " autograd message " + ContextContainer.describe(messageId) + " of context "
                            + ContextContainer.describe(contextId) + ", which went to worker "
                            + transport.describe(send.to()));
                }
                Tensor[] grads = gradients((List<Object>) list, send);
                if (!retainGraph) {
                    // Its part of the graph is freed as it runs: later passes in this context must not wait for it.
                    context.spend(messageId);
                }
                pass.fed.add(messageId);
                pass.task.feed(send, grads);
                return new Step(pass.takeIssued(), pass.unfed());
            }
        }).compose(step -> gather(step.issued()).map(missing -> {
            missing.report(transport.self(), step.unfed());
            return (Object) missing.toWire();
        }));
    }

    /**
     * Called by a recv function as it runs (so under the context's monitor, inside a pass): ships its gradients to
     * the worker that sent the tensors.
     */
    void ship(DistAutogradContext context, int to, long messageId, Tensor[] grads) {
        Pass pass = context.pass;
        List<Object> args = Arrays.asList(context.id(), messageId, pass.id, pass.retainGraph,
                new ArrayList<>(Arrays.asList(grads)));
        outstanding.incrementAndGet();
        Future<Object> answer = transport.call(to, PROPAGATE, args).transform(r -> {
            outstanding.decrementAndGet();
            if (r.failed()) {
                return Future.failedFuture(new DistAutogradException("the backward pass of distributed autograd "
                        + "context " + ContextContainer.describe(context.id()) + " failed on worker "
                        + transport.describe(to) + ": " + r.cause().getMessage(), r.cause()));
            }
            MissingGradients reported = new MissingGradients();
            reported.merge(r.result(), transport.describe(to));
            return Future.succeededFuture(reported);
        });
        pass.issued.add(answer);
    }

    private Pass begin(DistAutogradContext context, long passId, boolean retainGraph, boolean initiator,
                       List<Edge> roots) {
        Engine.Options options = new Engine.Options(retainGraph, context::accumulateGrad, List.of());
        Discovery discovery = context.keepDiscovery(passId);
        Set<Long> reached = discovery == null ? null : discovery.reachedSends();
        List<SendBackward> sends = new ArrayList<>();
        for (SendBackward s : context.sendFunctions()) {
            if (reached == null || reached.contains(s.messageId())) {
                sends.add(s);
            }
        }
        Pass pass = new Pass(passId, retainGraph, initiator, new GraphTask(roots, List.copyOf(sends), options), sends);
        context.pass = pass;
        return pass;
    }

    private static void end(DistAutogradContext context, long passId) {
        synchronized (context) {
            if (context.pass != null && context.pass.id == passId) {
                context.pass = null;
            }
        }
    }

    private static Future<Void> allOf(List<Future<Object>> issued) {
        return issued.isEmpty() ? Future.succeededFuture() : Future.all(issued).mapEmpty();
    }

    /** Waits for propagate calls and merges what their answers report missing. */
    private Future<MissingGradients> gather(List<Future<Object>> issued) {
        return allOf(issued).map(v -> {
            MissingGradients missing = new MissingGradients();
            for (Future<Object> answer : issued) {
                missing.addAll((MissingGradients) answer.result());
            }
            return missing;
        });
    }

    private static List<Edge> rootEdges(List<Tensor> roots) {
        if (roots == null || roots.isEmpty()) {
            throw new IllegalArgumentException("backward needs at least one root");
        }
        List<Edge> edges = new ArrayList<>();
        for (int i = 0; i < roots.size(); i++) {
            Tensor r = roots.get(i);
            if (r == null) {
                throw new IllegalArgumentException("root " + i + " is null");
            }
            if (!r.requiresGrad()) {
                throw new IllegalArgumentException("root " + i + " does not require grad: it is not part of a graph "
                        + "(was it computed inside the context, from tensors that require grad?)");
            }
            if (r.numel() != 1) {
                throw new IllegalArgumentException("root " + i + " has shape " + Arrays.toString(r.shape())
                        + ": the roots of a distributed backward pass are scalars, as in PyTorch");
            }
            edges.add(Autograd.gradientEdge(r));
        }
        return edges;
    }

    private static Tensor[] gradients(List<Object> list, SendBackward send) {
        if (list.size() != send.numInputs()) {
            throw new IllegalArgumentException("autograd message " + ContextContainer.describe(send.messageId())
                    + " sent " + send.numInputs() + " tensors requiring grad, but " + list.size() + " gradients came");
        }
        Tensor[] grads = new Tensor[list.size()];
        for (int i = 0; i < grads.length; i++) {
            Object g = list.get(i);
            if (g != null && !(g instanceof Tensor)) {
                throw new IllegalArgumentException("gradient " + i + " of autograd message "
                        + ContextContainer.describe(send.messageId()) + " is not a tensor");
            }
            grads[i] = (Tensor) g;
        }
        return grads;
    }
}
