package io.tensorbus.internal.distributed.autograd;

import io.tensorbus.autograd.Edge;
import io.tensorbus.autograd.Node;
import io.tensorbus.tensor.Tensor;
import java.util.Arrays;
import java.util.Objects;

/**
 * PyTorch's {@code RecvRpcBackward}: the history of the tensors a worker received in an RPC of a context. It has
 * no local next edges; in the backward pass it ships the gradients of those tensors to the worker that sent them,
 * for the {@link SendBackward} of the same autograd message id ({@code dist_autograd.propagate}).
 */
final class RecvBackward extends Node {
    /** Where the gradients of a received message go: the sender's send function. */
    @FunctionalInterface
    interface GradientSink {
        /** Ships {@code grads} (one per received tensor, null where none arrived) for {@code messageId}. */
        void propagate(int fromWorker, long messageId, Tensor[] grads);
    }

    private final int sender;
    private final long messageId;
    private final GradientSink sink;

    /**
     * @param sender the worker that sent the tensors
     * @param messageId the autograd message id of the RPC that carried them
     * @param received how many tensors requiring grad the message carried
     */
    RecvBackward(int sender, long messageId, int received, GradientSink sink) {
        super(new Edge[0], received);
        this.sender = sender;
        this.messageId = messageId;
        this.sink = Objects.requireNonNull(sink, "sink");
    }

    /** The worker the gradients go back to. */
    int sender() {
        return sender;
    }

    /** The autograd message id this recv was recorded under. */
    long messageId() {
        return messageId;
    }

    @Override
    public String name() {
        return "RecvRpcBackward";
    }

    @Override
    protected Tensor[] apply(Tensor[] gradOutputs) {
        sink.propagate(sender, messageId, Arrays.copyOf(gradOutputs, gradOutputs.length));
        return new Tensor[0];
    }
}
