package io.tensorbus.autograd;

import io.tensorbus.internal.autograd.NodeInternals;
import io.tensorbus.tensor.Tensor;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.UnaryOperator;

/**
 * A function of the backward graph (PyTorch's {@code torch.autograd.graph.Node}, what {@code gradFn}
 * points to). It receives the gradients of its forward op's outputs and returns the gradients of the
 * forward inputs, which the engine sends along {@link #nextEdges()}.
 *
 * <p>Subclasses implement {@link #apply(Tensor[])}; distributed autograd adds nodes that send or receive
 * gradients over the network by subclassing this too.
 */
public abstract class Node {
    private static final AtomicLong NEXT_SEQUENCE = new AtomicLong();

    static {
        NodeInternals.install(new NodeInternals.Access() {
            @Override
            public Tensor[] callPreHooksOnly(Node node, Tensor[] gradOutputs) {
                return node.callPreHooksOnly(gradOutputs);
            }

            @Override
            public Tensor[] applyWithPostHooks(Node node, Tensor[] gradOutputs) {
                return node.applyWithPostHooks(gradOutputs);
            }

            @Override
            public Edge[] edges(Node node) {
                return node.edges();
            }

            @Override
            public void releaseVariables(Node node) {
                node.releaseVariables();
            }
        });
    }

    private final long sequenceNr = NEXT_SEQUENCE.getAndIncrement();
    private final Edge[] nextEdges;
    private final List<List<UnaryOperator<Tensor>>> tensorPreHooks;
    private final List<PostHook> postHooks = new ArrayList<>(0);

    /** Called after {@link #apply}: the gradients it produced and the ones it received. */
    @FunctionalInterface
    public interface PostHook {
        /**
         * @param gradInputs the gradients this node produced (one per next edge; entries may be null)
         * @param gradOutputs the gradients this node received
         */
        void call(Tensor[] gradInputs, Tensor[] gradOutputs);
    }

    /**
     * @param nextEdges one edge per forward input; {@code null} entries for inputs that need no gradient
     * @param numInputs how many gradients this node receives (the forward op's number of outputs)
     */
    protected Node(Edge[] nextEdges, int numInputs) {
        this.nextEdges = nextEdges.clone();
        List<List<UnaryOperator<Tensor>>> hooks = new ArrayList<>(numInputs);
        for (int i = 0; i < numInputs; i++) {
            hooks.add(new ArrayList<>(0));
        }
        this.tensorPreHooks = hooks;
    }

    /** PyTorch's name for the node, such as {@code MulBackward0}. */
    public abstract String name();

    /**
     * Computes the gradients of the forward inputs.
     *
     * @param gradOutputs one gradient per forward output
     * @return one gradient per next edge (entries for edges that are null may be null)
     */
    protected abstract Tensor[] apply(Tensor[] gradOutputs);

    /** Frees what was saved for backward; after this, {@link #apply} must fail with a clear message. */
    protected void releaseVariables() {
    }

    /** How many gradients this node receives. */
    public int numInputs() {
        return tensorPreHooks.size();
    }

    /** The edges to the nodes that receive this node's gradients, one per forward input (null entries kept). */
    public List<Edge> nextEdges() {
        return Collections.unmodifiableList(Arrays.asList(nextEdges));
    }

    /** Creation order; among ready nodes the engine runs the most recently created first, as PyTorch. */
    public long sequenceNr() {
        return sequenceNr;
    }

    /**
     * Registers a hook that sees (and may replace) the gradient arriving for input {@code inputNr}:
     * this is how {@link Tensor#registerHook} works for non-leaf tensors.
     */
    public RemovableHandle registerTensorPreHook(int inputNr, UnaryOperator<Tensor> hook) {
        List<UnaryOperator<Tensor>> list = tensorPreHooks.get(inputNr);
        list.add(hook);
        return () -> list.remove(hook);
    }

    /** Registers a hook that runs after this node has computed its gradients. */
    public RemovableHandle registerPostHook(PostHook hook) {
        postHooks.add(hook);
        return () -> postHooks.remove(hook);
    }

    /** Runs the tensor pre-hooks on the arriving gradients, replacing those a hook returns. */
    Tensor[] callPreHooksOnly(Tensor[] gradOutputs) {
        for (int i = 0; i < gradOutputs.length; i++) {
            for (UnaryOperator<Tensor> hook : List.copyOf(tensorPreHooks.get(i))) {
                if (gradOutputs[i] != null) {
                    Tensor replaced = hook.apply(gradOutputs[i]);
                    gradOutputs[i] = replaced != null ? replaced : gradOutputs[i];
                }
            }
        }
        return gradOutputs;
    }

    /** Runs {@link #apply} then the post-hooks, on gradients that already went through the pre-hooks. */
    Tensor[] applyWithPostHooks(Tensor[] gradOutputs) {
        Tensor[] gradInputs = apply(gradOutputs);
        for (PostHook hook : List.copyOf(postHooks)) {
            hook.call(gradInputs, gradOutputs);
        }
        return gradInputs;
    }

    /** The next edges, not copied, for this package's nodes. */
    Edge[] edges() {
        return nextEdges;
    }

    @Override
    public String toString() {
        return "<" + name() + ">";
    }
}
