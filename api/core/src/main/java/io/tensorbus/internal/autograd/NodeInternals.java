package io.tensorbus.internal.autograd;

import io.tensorbus.autograd.Edge;
import io.tensorbus.autograd.Node;
import io.tensorbus.tensor.Tensor;
import java.util.Objects;

/**
 * What the engine reaches on a {@link Node} that users and custom nodes do not: running its hooks and its
 * {@code apply}, its edges as an array, and freeing what it saved. {@code Node} installs the access when its class
 * initialises, so these stay off its public face, as {@code TensorInternals} does for tensors.
 */
public final class NodeInternals {
    /** The operations {@code Node} grants; installed once, by {@code Node} itself. */
    public interface Access {
        /** See {@link NodeInternals#callPreHooksOnly}. */
        Tensor[] callPreHooksOnly(Node node, Tensor[] gradOutputs);

        /** See {@link NodeInternals#applyWithPostHooks}. */
        Tensor[] applyWithPostHooks(Node node, Tensor[] gradOutputs);

        /** See {@link NodeInternals#edges}. */
        Edge[] edges(Node node);

        /** See {@link NodeInternals#releaseVariables}. */
        void releaseVariables(Node node);
    }

    private static volatile Access access;

    private NodeInternals() {
    }

    /**
     * Called by {@code Node}'s static initialiser.
     *
     * @throws IllegalStateException when an access was installed already
     */
    public static synchronized void install(Access a) {
        if (access != null) {
            throw new IllegalStateException("the node access is installed already");
        }
        access = Objects.requireNonNull(a, "access");
    }

    /** Runs the tensor pre-hooks on the gradients arriving at {@code node}, replacing those a hook returns. */
    static Tensor[] callPreHooksOnly(Node node, Tensor[] gradOutputs) {
        return access.callPreHooksOnly(node, gradOutputs);
    }

    /** Runs the node's {@code apply}, then its post-hooks, on gradients that went through the pre-hooks. */
    static Tensor[] applyWithPostHooks(Node node, Tensor[] gradOutputs) {
        return access.applyWithPostHooks(node, gradOutputs);
    }

    /** Pre-hooks, {@code apply}, post-hooks: the engine's single entry point into a node. */
    static Tensor[] call(Node node, Tensor[] gradOutputs) {
        return applyWithPostHooks(node, callPreHooksOnly(node, gradOutputs));
    }

    /** The node's edges, not copied. */
    static Edge[] edges(Node node) {
        return access.edges(node);
    }

    /** Frees the tensors the node saved for its backward, once a pass that does not retain the graph ran it. */
    static void releaseVariables(Node node) {
        access.releaseVariables(node);
    }
}
