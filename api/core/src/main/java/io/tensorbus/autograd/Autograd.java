package io.tensorbus.autograd;

import io.tensorbus.internal.autograd.Engine;
import io.tensorbus.internal.tensor.TensorInternals;
import io.tensorbus.tensor.Tensor;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * The user-facing entry points of autograd ({@code torch.autograd}): {@link #backward}, {@link #grad},
 * {@link #noGrad()}, and {@link #record}, with which every differentiable op (and user-defined function)
 * attaches its backward formula to its outputs.
 */
public final class Autograd {
    private Autograd() {
    }

    /** A scope in which ops record no graph, as {@code with torch.no_grad():}. Close it to restore. */
    public static GradMode.Scope noGrad() {
        return new GradMode.Scope(false);
    }

    /** A scope in which ops record the graph again, inside an outer {@link #noGrad()}. */
    public static GradMode.Scope enableGrad() {
        return new GradMode.Scope(true);
    }

    /** True when ops on this thread record the backward graph. */
    public static boolean isGradEnabled() {
        return GradMode.isEnabled();
    }

    /**
     * Records {@code backward} as the gradient formula of an op with one output, when recording is on and
     * any input requires grad; otherwise returns {@code output} untouched.
     *
     * @param name PyTorch's node name, such as {@code MulBackward0}
     * @param inputs the op's tensor inputs in the order {@code backward} returns their gradients (null allowed)
     */
    public static Tensor record(String name, Tensor output, BackwardFunction backward, Tensor... inputs) {
        return recordMulti(name, new Tensor[] {output}, backward, inputs)[0];
    }

    /** As {@link #record} for an op with several outputs (split, chunk, max with indices). */
    public static Tensor[] recordMulti(String name, Tensor[] outputs, BackwardFunction backward, Tensor... inputs) {
        if (!GradMode.isEnabled() || !anyRequiresGrad(inputs)) {
            return outputs;
        }
        Edge[] edges = new Edge[inputs.length];
        for (int i = 0; i < inputs.length; i++) {
            edges[i] = inputs[i] == null ? null : gradientEdge(inputs[i]);
        }
        Node node = new FunctionNode(name, edges, inputs, outputs, backward);
        for (int i = 0; i < outputs.length; i++) {
            if (outputs[i].dtype().isFloatingPoint()) {
                TensorInternals.setGradFn(outputs[i], node, i);
            }
        }
        return outputs;
    }

    /** True when recording is on and one of the tensors requires grad: the test every op makes. */
    public static boolean needsGrad(Tensor... inputs) {
        return GradMode.isEnabled() && anyRequiresGrad(inputs);
    }

    private static boolean anyRequiresGrad(Tensor[] inputs) {
        for (Tensor t : inputs) {
            if (t != null && t.requiresGrad()) {
                return true;
            }
        }
        return false;
    }

    /**
     * Where the gradient of {@code t} goes: its {@code gradFn} for a result, its accumulator for a leaf.
     *
     * @return the edge, or {@code null} when {@code t} does not require grad
     */
    public static Edge gradientEdge(Tensor t) {
        if (t.gradFn() != null) {
            return new Edge(t.gradFn(), t.outputNr());
        }
        return t.requiresGrad() ? new Edge(TensorInternals.gradAccumulator(t), 0) : null;
    }

    /**
     * Computes the gradients of {@code tensors} with respect to the graph leaves and accumulates them in
     * their {@code .grad}.
     *
     * @param grads the gradient of each root; an entry (or the list) may be null for a one-element root
     * @param retainGraph keep the graph so that backward can run through it again
     * @throws IllegalArgumentException for a root that does not require grad, or a non-scalar root without
     *     a gradient, or a gradient whose shape differs from its root's
     * @throws IllegalStateException when the graph was already freed by a previous backward
     */
    public static void backward(List<Tensor> tensors, List<Tensor> grads, boolean retainGraph) {
        List<Edge> roots = new ArrayList<>();
        List<Tensor> rootGrads = rootGradients(tensors, grads, roots);
        Engine.execute(roots, rootGrads, new Engine.Options(retainGraph, null, List.of()));
    }

    /**
     * Computes and returns the gradients of {@code outputs} with respect to {@code inputs}, without touching
     * any {@code .grad} ({@code torch.autograd.grad}).
     *
     * @param allowUnused when false, an input that {@code outputs} do not depend on is an error; when true
     *     its gradient is null
     * @throws IllegalArgumentException for an input that does not require grad, or an unused input when not allowed
     */
    public static List<Tensor> grad(List<Tensor> outputs, List<Tensor> inputs, List<Tensor> gradOutputs,
            boolean retainGraph, boolean allowUnused) {
        List<Edge> roots = new ArrayList<>();
        List<Tensor> rootGrads = rootGradients(outputs, gradOutputs, roots);
        List<Edge> captures = new ArrayList<>();
        for (int i = 0; i < inputs.size(); i++) {
            Edge e = gradientEdge(Objects.requireNonNull(inputs.get(i), "input " + i));
            if (e == null) {
                throw new IllegalArgumentException("input " + i
                        + " does not require grad; call requiresGrad(true) on it");
            }
            captures.add(e);
        }
        Map<Edge, Tensor> got = Engine.execute(roots, rootGrads, new Engine.Options(retainGraph, null, captures));
        List<Tensor> result = new ArrayList<>();
        for (int i = 0; i < captures.size(); i++) {
            Tensor g = got.get(captures.get(i));
            if (g == null && !allowUnused) {
                throw new IllegalArgumentException("input " + i + " was not used in the graph of the outputs;"
                        + " pass allowUnused=true to get null for it");
            }
            result.add(g);
        }
        return result;
    }

    private static List<Tensor> rootGradients(List<Tensor> tensors, List<Tensor> grads, List<Edge> roots) {
        Objects.requireNonNull(tensors, "tensors");
        if (grads != null && grads.size() != tensors.size()) {
            throw new IllegalArgumentException("got " + tensors.size() + " tensors but " + grads.size() + " gradients");
        }
        List<Tensor> out = new ArrayList<>();
        for (int i = 0; i < tensors.size(); i++) {
            Tensor t = Objects.requireNonNull(tensors.get(i), "tensor " + i);
            Edge e = gradientEdge(t);
            if (e == null) {
                throw new IllegalArgumentException("element " + i + " of tensors does not require grad and does "
                        + "not have a gradFn; call requiresGrad(true) on a leaf it depends on");
            }
            Tensor g = grads == null ? null : grads.get(i);
            if (g == null) {
                if (t.numel() != 1) {
                    throw new IllegalArgumentException("grad can be implicitly created only for scalar outputs;"
                            + " tensor " + i + " has shape " + Arrays.toString(t.shape()) + ", pass its gradient");
                }
                g = Tensor.onesLike(t);
            } else if (!Arrays.equals(g.shape(), t.shape())) {
                throw new IllegalArgumentException("gradient " + i + " has shape " + Arrays.toString(g.shape())
                        + " but its tensor has shape " + Arrays.toString(t.shape()));
            }
            roots.add(e);
            out.add(g);
        }
        return out;
    }
}
