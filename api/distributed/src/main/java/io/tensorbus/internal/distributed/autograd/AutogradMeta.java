package io.tensorbus.internal.distributed.autograd;

/**
 * What an RPC of a distributed autograd context carries beside its values (PyTorch's {@code AutogradMetadata}):
 * the context id, and the autograd message id under which the sender recorded its send function and the receiver
 * records the matching recv function.
 *
 * @param contextId the context the message belongs to
 * @param messageId the send/recv pair's id, made by the sender's container
 */
public record AutogradMeta(long contextId, long messageId) {
}
