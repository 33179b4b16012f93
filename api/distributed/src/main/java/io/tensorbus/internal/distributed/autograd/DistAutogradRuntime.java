package io.tensorbus.internal.distributed.autograd;

import io.tensorbus.autograd.Autograd;
import io.tensorbus.distributed.autograd.DistAutograd;
import io.tensorbus.internal.distributed.Blocking;
import io.tensorbus.internal.distributed.TimelineRecorder;
import io.tensorbus.internal.tensor.TensorInternals;
import io.tensorbus.tensor.Tensor;
import io.vertx.core.Future;
import io.vertx.core.json.JsonObject;
import java.lang.System.Logger.Level;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.Callable;
import java.util.concurrent.atomic.AtomicLong;

/**
 * One RPC worker's distributed autograd: its {@link ContextContainer}, the context current on each thread, the
 * recording the agent asks for as it encodes and decodes messages ({@link #recordSend}, {@link #recordRecv}), the
 * internal functions other workers call ({@value DistEngine#PROPAGATE}, {@value #RELEASE}) and the user API.
 * Thread-safe.
 */
public final class DistAutogradRuntime implements DistAutograd {
    /** {@code [contextId]}: release the context here and on the workers this one knows in it. */
    static final String RELEASE = "tensorbus.dist_autograd.release";
    /** The internal functions' prefix. */
    static final String PREFIX = "tensorbus.dist_autograd.";
    /** The default mode: see {@code docs/dist-autograd-design.md} for the measurement behind it. */
    private static final Mode DEFAULT_MODE = Mode.FAST;
    private static final System.Logger LOG = System.getLogger(DistAutogradRuntime.class.getName());

    private final AutogradTransport transport;
    private final ContextContainer container;
    /** The backward passes this worker started, numbering their spans on its timeline. */
    private final AtomicLong passes = new AtomicLong();
    private final DistEngine engine;
    private final ThreadLocal<DistAutogradContext> current = new ThreadLocal<>();

    /**
     * @throws IllegalArgumentException when the worker's id is larger than an id can hold
     */
    public DistAutogradRuntime(AutogradTransport transport) {
        this.transport = transport;
        this.container = new ContextContainer(transport.self());
        this.engine = new DistEngine(transport, container);
    }

    @Override
    public Context context() {
        if (current() != null) {
            throw new IllegalStateException("this thread has a distributed autograd context already ("
                    + ContextContainer.describe(current.get().id()) + "): contexts do not nest");
        }
        DistAutogradContext c = container.newContext();
        current.set(c);
        return new UserContext(c, Thread.currentThread());
    }

    @Override
    public Future<Void> backwardAsync(long contextId, List<Tensor> roots, boolean retainGraph) {
        return backwardAsync(contextId, roots, retainGraph, defaultMode());
    }

    @Override
    public Future<Void> backwardAsync(long contextId, List<Tensor> roots, boolean retainGraph, Mode mode) {
        Objects.requireNonNull(mode, "mode");
        long at = TimelineRecorder.now(transport.self());
        return onTimeline(at, contextId, mode, engine.backward(container.retrieve(contextId), roots, retainGraph,
                mode == Mode.SMART, false));
    }

    /** {@code pass}, which began at {@code at} (0: no timeline), as a span on this worker's timeline. */
    private Future<Void> onTimeline(long at, long contextId, Mode mode, Future<Void> pass) {
        return TimelineRecorder.spanWhenDone(transport.self(), at, "dist_autograd", "backward", "dist autograd",
                passes.incrementAndGet(), new JsonObject().put("context", contextId).put("mode", mode.name()), pass);
    }

    @Override
    public Mode defaultMode() {
        return DEFAULT_MODE;
    }

    @Override
    public void backward(long contextId, List<Tensor> roots, boolean retainGraph) {
        backward(contextId, roots, retainGraph, defaultMode());
    }

    @Override
    public void backward(long contextId, List<Tensor> roots, boolean retainGraph, Mode mode) {
        Objects.requireNonNull(mode, "mode");
        String what = "distributed backward of context " + ContextContainer.describe(contextId);
        Blocking.checkMayBlock(what);
        long at = TimelineRecorder.now(transport.self());
        Blocking.await(onTimeline(at, contextId, mode, engine.backward(container.retrieve(contextId), roots,
                retainGraph, mode == Mode.SMART, true)), transport.timeout().multipliedBy(2), what);
    }

    @Override
    public Map<Tensor, Tensor> getGradients(long contextId) {
        return container.retrieve(contextId).gradients();
    }

    @Override
    public Map<String, Long> debugInfo() {
        long sends = 0;
        long recvs = 0;
        for (DistAutogradContext c : container.contexts()) {
            sends += c.sendCount();
            recvs += c.recvCount();
        }
        Map<String, Long> info = new LinkedHashMap<>();
        info.put("num_current_contexts", (long) container.size());
        info.put("num_send_functions", sends);
        info.put("num_recv_functions", recvs);
        info.put("num_outstanding_rpcs", (long) engine.outstanding());
        return info;
    }

    /** The number of contexts alive on this worker (its own and those its peers started). */
    public int contextCount() {
        return container.size();
    }

    /** The context the calls this thread makes now record in, or null when there is none. */
    public DistAutogradContext current() {
        DistAutogradContext c = current.get();
        if (c != null && c.isReleased()) {
            current.remove();
            return null;
        }
        return c;
    }

    /** Runs {@code task} with {@code context} current on this thread (a served call of that context). */
    public <T> T callIn(DistAutogradContext context, Callable<T> task) throws Exception {
        if (context == null) {
            return task.call();
        }
        DistAutogradContext before = current.get();
        current.set(context);
        try {
            return task.call();
        } finally {
            if (before == null) {
                current.remove();
            } else {
                current.set(before);
            }
        }
    }

    /**
     * Records a message of {@code context} to worker {@code to} whose attached tensors are {@code sent}: a send
     * function for those that require grad (PyTorch's {@code addSendRpcBackward}). {@code what} names the message
     * for errors ("the arguments of 'f' to worker1 (rank 1)"). Returns what the message carries, or null when
     * {@code context} is null or released (nothing is recorded).
     */
    public AutogradMeta recordSend(DistAutogradContext context, int to, String what, List<Tensor> sent) {
        if (context == null || context.isReleased()) {
            return null;
        }
        context.addKnownWorker(to);
        long messageId = container.newMessageId();
        List<Tensor> grad = Autograd.isGradEnabled() ? sent.stream().filter(Tensor::requiresGrad).toList() : List.of();
        if (!grad.isEmpty()) {
            context.addSend(new SendBackward(messageId, to, what, grad));
        }
        return new AutogradMeta(context.id(), messageId);
    }

    /**
     * Records a message from worker {@code from} carrying {@code meta} whose attached tensors are {@code received}:
     * the context is created on first contact, and the tensors that require grad get a recv function as their
     * history (PyTorch's {@code addRecvRpcBackward}). Nothing happens when {@code meta} is null.
     *
     * @return the context the message belongs to (for running the call in it), or null when {@code meta} is null
     * @throws IllegalArgumentException when the ids are not ones {@code from} may send (another worker's message
     *     id, a context of a worker outside the job) or name a context released here; no context is touched
     */
    public DistAutogradContext recordRecv(int from, AutogradMeta meta, List<Tensor> received) {
        if (meta == null) {
            return null;
        }
        int owner = ContextContainer.workerOf(meta.contextId());
        if (owner < 0 || owner >= transport.worldSize() || ContextContainer.workerOf(meta.messageId()) != from) {
            throw new IllegalArgumentException("worker " + transport.describe(from) + " sent autograd ids it cannot "
                    + "have made (context " + ContextContainer.describe(meta.contextId()) + ", message "
                    + ContextContainer.describe(meta.messageId()) + ")");
        }
        DistAutogradContext context = container.getOrCreate(meta.contextId());
        context.addKnownWorker(from);
        List<Tensor> grad = received.stream().filter(Tensor::requiresGrad).toList();
        if (grad.isEmpty()) {
            return context;
        }
        RecvBackward recv = new RecvBackward(from, meta.messageId(), grad.size(),
                (to, id, grads) -> engine.ship(context, to, id, grads));
        context.addRecv(recv);
        for (int i = 0; i < grad.size(); i++) {
            TensorInternals.setGradFn(grad.get(i), recv, i);
        }
        return context;
    }

    /** True for the internal functions {@link #serve} answers. */
    public static boolean isInternal(String function) {
        return function.startsWith(PREFIX);
    }

    /**
     * Answers the internal function {@code function} that worker {@code caller} called with {@code args}.
     *
     * @return the answer; a failed future for an unknown function or a refused request
     */
    public Future<Object> serve(int caller, String function, List<Object> args) {
        try {
            if (!args.isEmpty() && args.get(0) instanceof Long id
                    && ContextContainer.workerOf(id) >= transport.worldSize()) {
                throw new IllegalArgumentException("worker " + transport.describe(caller) + " named distributed"
                        + " autograd context " + ContextContainer.describe(id) + " in " + function + ": no worker "
                        + ContextContainer.workerOf(id) + " in a job of " + transport.worldSize());
            }
            return switch (function) {
                case DistEngine.PROPAGATE -> engine.propagate(caller, args);
                case DistEngine.DISCOVER -> engine.discover(caller, args);
                case RELEASE -> args.size() == 1 && args.get(0) instanceof Long id
                        ? release(id, caller).map(v -> null)
                        : Future.failedFuture(new IllegalArgumentException("a malformed " + RELEASE));
                default -> Future.failedFuture(new IllegalArgumentException("no internal function '" + function + "'"));
            };
        } catch (RuntimeException e) {
            return Future.failedFuture(e);
        }
    }

    /**
     * Releases context {@code id} here and, first, on the workers this one knows in it other than {@code from}
     * (PyTorch's cleanup); completes when they have answered, whatever they answered.
     */
    Future<Void> release(long id, int from) {
        DistAutogradContext context = container.find(id);
        boolean initiator = ContextContainer.workerOf(id) == from;
        if (context == null) {
            if (initiator) {
                // It never arrived here: a message of it still on its way must not create it afterwards.
                container.release(id);
            }
            return Future.succeededFuture();
        }
        if (ContextContainer.workerOf(id) == transport.self() && from != transport.self()) {
            return Future.failedFuture(new IllegalArgumentException("worker " + transport.describe(from) + " may not"
                    + " release distributed autograd context " + ContextContainer.describe(id) + ": it belongs to"
                    + " worker " + transport.describe(transport.self()) + ", whose user closes it"));
        }
        if (!initiator && from != transport.self() && !context.knownWorkers().contains(from)) {
            return Future.failedFuture(new IllegalArgumentException("worker " + transport.describe(from) + " may not"
                    + " release distributed autograd context " + ContextContainer.describe(id) + " on worker "
                    + transport.describe(transport.self()) + ": it neither started it nor exchanged a message of it"
                    + " with this worker"));
        }
        container.release(id);
        List<Integer> tell = new ArrayList<>(context.knownWorkers());
        List<Future<Object>> told = new ArrayList<>();
        for (int w : tell) {
            if (w != from && w != transport.self()) {
                told.add(transport.call(w, RELEASE, List.of(id)).recover(e -> {
                    LOG.log(Level.DEBUG, "worker {0} did not confirm the release of context {1}: {2}",
                            transport.describe(w), ContextContainer.describe(id), e.getMessage());
                    return Future.succeededFuture();
                }));
            }
        }
        return told.isEmpty() ? Future.succeededFuture() : Future.join(told).mapEmpty();
    }

    /**
     * Worker {@code worker} is gone for good: the contexts it started are released here (nobody will release or
     * finish them).
     */
    public void workerLost(int worker) {
        for (DistAutogradContext c : container.contexts()) {
            int initiator = ContextContainer.workerOf(c.id());
            // This worker's own contexts stay: their backward fails naming the lost worker, and closing releases.
            if (initiator != transport.self() && (initiator == worker || c.knownWorkers().contains(worker))) {
                LOG.log(Level.INFO, "releasing distributed autograd context {0}: worker {1}, a part of it, is lost",
                        ContextContainer.describe(c.id()), transport.describe(worker));
                release(c.id(), worker);
            }
        }
    }

    /**
     * Releases the contexts of other workers that no message reached for longer than {@code idle}: their initiator
     * is gone without a word, or forgot to close them. This worker's own contexts are its users' to close.
     */
    public void expireIdle(Duration idle) {
        long now = System.nanoTime();
        for (DistAutogradContext c : container.contexts()) {
            if (ContextContainer.workerOf(c.id()) != transport.self() && c.idleNanos(now) > idle.toNanos()) {
                LOG.log(Level.INFO, "releasing distributed autograd context {0}: no message of it for {1} s",
                        ContextContainer.describe(c.id()), idle.toSeconds());
                release(c.id(), transport.self());
            }
        }
    }

    /** The agent shuts down: every context is released here. */
    public void close() {
        for (DistAutogradContext c : container.contexts()) {
            container.release(c.id());
        }
    }

    /** A context as the thread that opened it holds it. */
    private final class UserContext implements Context {
        private final DistAutogradContext context;
        private final Thread owner;

        UserContext(DistAutogradContext context, Thread owner) {
            this.context = context;
            this.owner = owner;
        }

        @Override
        public long id() {
            return context.id();
        }

        @Override
        public Future<Void> release() {
            if (Thread.currentThread() == owner && current.get() == context) {
                current.remove();
            }
            return DistAutogradRuntime.this.release(context.id(), transport.self());
        }

        @Override
        public void close() {
            release();
        }

        @Override
        public String toString() {
            return "dist autograd context " + ContextContainer.describe(context.id());
        }
    }
}
