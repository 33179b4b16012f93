package io.tensorbus.internal.distributed.autograd;

import io.tensorbus.autograd.Autograd;
import io.tensorbus.tensor.MemoryScope;
import io.tensorbus.tensor.Tensor;
import java.util.Arrays;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The state of one distributed forward and backward pass on one worker, as PyTorch's
 * {@code DistAutogradContext}: the send and recv functions its RPCs attached to the graph (by autograd message
 * id, which also keeps them alive), the workers its messages went to or came from (they are told when it is
 * released), the gradients its backward pass accumulated, by tensor identity (never into {@code .grad}), and the
 * backward pass running on this worker. Thread-safe; {@link DistEngine} runs a pass holding the context's
 * monitor, so one thread at a time drives its graph.
 */
public final class DistAutogradContext {
    private final long id;
    private final Set<Integer> knownWorkers = ConcurrentHashMap.newKeySet();
    private final Map<Long, SendBackward> sends = new ConcurrentHashMap<>();
    private final Map<Long, RecvBackward> recvs = new ConcurrentHashMap<>();
    /** Send functions a pass without retainGraph ran: their part of the graph is freed. */
    private final Set<Long> spent = ConcurrentHashMap.newKeySet();
    /** By tensor identity, as PyTorch keys them by the tensor's implementation. */
    private final Map<Tensor, Tensor> gradients = new IdentityHashMap<>();
    private volatile boolean released;
    private volatile long lastActive = System.nanoTime();
    /** The backward pass on this worker, guarded by this context's monitor. */
    DistEngine.Pass pass;
    /** What SMART mode's discovery learnt here, by pass id. */
    private final Map<Long, DistEngine.Discovery> discoveries = new ConcurrentHashMap<>();

    DistAutogradContext(long id) {
        this.id = id;
    }

    /** A message or a request of this context reached this worker now. */
    void touch() {
        lastActive = System.nanoTime();
    }

    /** How long ago, in nanoseconds, a message of this context last reached this worker (or it was made). */
    long idleNanos(long now) {
        return now - lastActive;
    }

    /** The context id, unique in the job. */
    public long id() {
        return id;
    }

    /** Remembers that a message of this context went to or came from {@code workerId}. */
    void addKnownWorker(int workerId) {
        knownWorkers.add(workerId);
    }

    /** The workers that hold a part of this context. */
    Set<Integer> knownWorkers() {
        return Set.copyOf(knownWorkers);
    }

    /** Keeps the send function of an RPC this worker sent. */
    void addSend(SendBackward send) {
        checkLive();
        sends.put(send.messageId(), send);
    }

    /**
     * Keeps the recv function of an RPC this worker received.
     *
     * @throws IllegalArgumentException when its message id was recorded already (a message replayed)
     */
    void addRecv(RecvBackward recv) {
        checkLive();
        if (recvs.putIfAbsent(recv.messageId(), recv) != null) {
            throw new IllegalArgumentException("autograd message " + ContextContainer.describe(recv.messageId())
                    + " arrived twice in context " + ContextContainer.describe(id));
        }
    }

    /**
     * The send function of message {@code messageId}.
     *
     * @throws IllegalArgumentException when this worker sent no tensors requiring grad under that id
     */
    SendBackward send(long messageId) {
        SendBackward s = sends.get(messageId);
        if (s == null && spent.contains(messageId)) {
            throw new IllegalStateException("Trying to backward through the graph a second time: the send function of "
                    + "autograd message " + ContextContainer.describe(messageId) + " in context "
                    + ContextContainer.describe(id) + " ran in a backward pass that freed its graph. Pass "
                    + "retainGraph=true to the first backward to run another.");
        }
        if (s == null) {
            throw new IllegalArgumentException("context " + ContextContainer.describe(id) + " has no send function "
                    + "for autograd message " + ContextContainer.describe(messageId));
        }
        return s;
    }

    /**
     * A pass without retainGraph runs the send function of {@code messageId}: it is no longer a root of later
     * passes, whose forward passes made send functions of their own.
     */
    void spend(long messageId) {
        if (sends.remove(messageId) != null) {
            spent.add(messageId);
        }
    }

    /** The discovery of pass {@code passId}, made on first use. */
    DistEngine.Discovery discovery(long passId) {
        return discoveries.computeIfAbsent(passId, id -> new DistEngine.Discovery());
    }

    /** The discovery of pass {@code passId} (null in FAST mode); the others are dropped, their passes are over. */
    DistEngine.Discovery keepDiscovery(long passId) {
        discoveries.keySet().removeIf(id -> id != passId);
        return discoveries.get(passId);
    }

    /** Every send function of the context, the extra roots of a FAST-mode pass. */
    List<SendBackward> sendFunctions() {
        return List.copyOf(sends.values());
    }

    /** How many send and recv functions the context keeps. */
    int sendCount() {
        return sends.size();
    }

    int recvCount() {
        return recvs.size();
    }

    /**
     * Adds {@code grad} to the gradient accumulated for {@code tensor} (a copy is kept: the caller may reuse its
     * buffer).
     *
     * @throws IllegalStateException after the context was released
     * @throws IllegalArgumentException when the gradient's shape or dtype differs from the tensor's
     */
    void accumulateGrad(Tensor tensor, Tensor grad) {
        if (grad.dtype() != tensor.dtype() || !Arrays.equals(grad.shape(), tensor.shape())) {
            throw new IllegalArgumentException("a gradient of shape " + Arrays.toString(grad.shape())
                    + " and dtype " + grad.dtype() + " for a tensor of shape "
                    + Arrays.toString(tensor.shape()) + " and dtype " + tensor.dtype());
        }
        try (var ignored = Autograd.noGrad()) {
            synchronized (gradients) {
                checkLive();
                Tensor sum = gradients.get(tensor);
                Tensor total = sum == null ? grad.detach().clone() : sum.add(grad);
                MemoryScope.detach(total); // lives as long as the context
                gradients.put(tensor, total);
            }
        }
    }

    /** The accumulated gradients, by tensor identity (PyTorch's {@code get_gradients}); a snapshot. */
    Map<Tensor, Tensor> gradients() {
        synchronized (gradients) {
            checkLive();
            return Collections.unmodifiableMap(new IdentityHashMap<>(gradients));
        }
    }

    /** True once released: later messages of this context are refused. */
    public boolean isReleased() {
        return released;
    }

    /** Drops the gradients and the graph's send and recv functions; later use fails. */
    void release() {
        synchronized (gradients) {
            released = true;
            gradients.clear();
        }
        sends.clear();
        recvs.clear();
        spent.clear();
        discoveries.clear();
    }

    void checkLive() {
        if (released) {
            throw new IllegalStateException("distributed autograd context " + ContextContainer.describe(id)
                    + " was released");
        }
    }

    @Override
    public String toString() {
        return ContextContainer.describe(id);
    }
}
