package io.tensorbus.distributed.autograd;

import io.tensorbus.autograd.Autograd;
import io.tensorbus.tensor.Tensor;
import java.util.Arrays;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The state of one distributed forward and backward pass on one worker, as PyTorch's
 * {@code DistAutogradContext}: the workers its messages went to or came from (they are told when it is
 * released), and the gradients its backward pass accumulated, by tensor identity (never into {@code .grad}).
 * Thread-safe.
 */
final class DistAutogradContext {
    private final long id;
    private final Set<Integer> knownWorkers = ConcurrentHashMap.newKeySet();
    /** By tensor identity, as PyTorch keys them by the tensor's implementation. */
    private final Map<Tensor, Tensor> gradients = new IdentityHashMap<>();
    private volatile boolean released;

    DistAutogradContext(long id) {
        this.id = id;
    }

    /** The context id, unique in the job. */
    long id() {
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
                gradients.put(tensor, sum == null ? grad.detach().clone() : sum.add(grad));
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
    boolean isReleased() {
        return released;
    }

    /** Drops the gradients; later use fails. */
    void release() {
        synchronized (gradients) {
            released = true;
            gradients.clear();
        }
    }

    private void checkLive() {
        if (released) {
            throw new IllegalStateException("distributed autograd context " + ContextContainer.describe(id)
                    + " was released");
        }
    }
}
