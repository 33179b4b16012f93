package io.tensorbus.internal.distributed.autograd;

import io.tensorbus.autograd.Autograd;
import io.tensorbus.autograd.Edge;
import io.tensorbus.autograd.Node;
import io.tensorbus.tensor.Tensor;
import java.util.Arrays;
import java.util.List;

/**
 * PyTorch's {@code SendRpcBackward}: recorded on the worker that sent tensors requiring grad in an RPC of a
 * context. In the backward pass its inputs are the gradients of those tensors, in message order, that the
 * receiver's {@link RecvBackward} of the same autograd message id ships back; it hands each on to the gradient
 * edge of the tensor that was sent.
 */
final class SendBackward extends Node {
    private final long messageId;
    private final int to;
    private final String what;

    /**
     * @param messageId the autograd message id of the RPC that carried {@code sent}
     * @param to the worker the message went to: the only one that may send its gradients back
     * @param what the message as a user knows it ("the arguments of 'f' to worker1 (rank 1)"), for errors
     * @param sent the tensors of the message that require grad, in message order
     */
    SendBackward(long messageId, int to, String what, List<Tensor> sent) {
        super(edges(sent), sent.size());
        this.messageId = messageId;
        this.to = to;
        this.what = what;
    }

    private static Edge[] edges(List<Tensor> sent) {
        return sent.stream().map(Autograd::gradientEdge).toArray(Edge[]::new);
    }

    /** The worker the message went to. */
    int to() {
        return to;
    }

    /** The message as a user knows it, for errors. */
    String what() {
        return what;
    }

    /** The autograd message id this send was recorded under. */
    long messageId() {
        return messageId;
    }

    @Override
    public String name() {
        return "SendRpcBackward";
    }

    @Override
    protected Tensor[] apply(Tensor[] gradOutputs) {
        return Arrays.copyOf(gradOutputs, gradOutputs.length);
    }
}
