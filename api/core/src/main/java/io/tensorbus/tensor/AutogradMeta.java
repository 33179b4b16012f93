package io.tensorbus.tensor;

import io.tensorbus.autograd.AccumulateGrad;
import io.tensorbus.autograd.Autograd;
import io.tensorbus.autograd.Node;
import io.tensorbus.internal.tensor.Shapes;
import java.util.Arrays;

/**
 * A tensor's autograd state, as PyTorch's {@code AutogradMeta}: made the first time the tensor joins a graph
 * (requires grad, gets a gradient or a node, or is a view whose base's history matters), so the many tensors
 * that never do carry none of it; and the rules that read and change it. Confined like the tensor: not safe for
 * concurrent writes, except that making it and the leaf's accumulator are guarded by the tensor's monitor.
 */
final class AutogradMeta {
    /** Set on leaves by {@code requiresGrad(true)}. */
    private boolean requiresGrad;
    /** The accumulated gradient ({@code .grad}). */
    private Tensor grad;
    /** The node that computes this tensor's gradient inputs; null for a leaf. */
    private Node gradFn;
    /** Which output of {@link #gradFn} this tensor is. */
    private int outputNr;
    /** The leaf's gradient accumulator, made on first need. */
    private AccumulateGrad accumulator;
    /** Whether {@code retainGrad()} registered its hook. */
    private boolean retainsGrad;
    /** Recorded in-place writes into this tensor as a base, so its views know their history is stale. */
    private int historyVersion;
    /** The base's {@link #historyVersion} when this view's history was last current. */
    private int viewVersion;
    /** Whether this view was taken with grad mode off. */
    private boolean viewMadeWithoutGrad;

    private AutogradMeta() {
    }

    private static AutogradMeta of(Tensor t) {
        AutogradMeta m = t.autograd;
        if (m != null) {
            return m;
        }
        synchronized (t) {
            if (t.autograd == null) {
                t.autograd = new AutogradMeta();
            }
            return t.autograd;
        }
    }

    static boolean requiresGrad(Tensor t) {
        AutogradMeta m = t.autograd;
        return m != null && m.requiresGrad || gradFn(t) != null;
    }

    static void setRequiresGrad(Tensor t, boolean value) {
        if (value && !t.dtype().isFloatingPoint()) {
            throw new IllegalArgumentException("only tensors of floating point dtype can require gradients, got "
                    + t.dtype());
        }
        if (!value && t.autograd != null && t.autograd.gradFn != null) {
            throw new IllegalArgumentException("requiresGrad(false) is only allowed on leaf tensors; use detach()");
        }
        if (value || t.autograd != null) {
            of(t).requiresGrad = value;
        }
    }

    static Tensor grad(Tensor t) {
        AutogradMeta m = t.autograd;
        return m == null ? null : m.grad;
    }

    static void setGrad(Tensor t, Tensor grad) {
        if (grad != null && !Arrays.equals(grad.shape(), t.shape())) {
            throw new IllegalArgumentException("assigned grad has shape " + Shapes.str(grad.shape())
                    + " but the tensor has shape " + Shapes.str(t.shape()));
        }
        if (grad != null && grad.dtype() != t.dtype()) {
            throw new IllegalArgumentException("assigned grad has dtype " + grad.dtype() + " but the tensor has dtype "
                    + t.dtype());
        }
        if (grad != null) {
            MemoryScope.detach(grad); // a gradient outlives the step that computed it
        }
        if (grad != null || t.autograd != null) {
            of(t).grad = grad;
        }
    }

    /** The node of {@code t}, first rebuilt from its base's history when the base was changed in place since. */
    static Node gradFn(Tensor t) {
        AutogradMeta m = t.autograd;
        Tensor base = t.base();
        if (base != null && (m == null ? 0 : m.viewVersion) != historyVersion(base)) {
            ViewHistory.regenerate(t);
            m = of(t);
            m.viewVersion = historyVersion(base);
        }
        return m == null ? null : m.gradFn;
    }

    static int outputNr(Tensor t) {
        AutogradMeta m = t.autograd;
        return m == null ? 0 : m.outputNr;
    }

    static void setGradFn(Tensor t, Node node, int outputNr) {
        if (node != null || t.autograd != null) {
            AutogradMeta m = of(t);
            m.gradFn = node;
            m.outputNr = outputNr;
        }
    }

    static AccumulateGrad gradAccumulator(Tensor t) {
        synchronized (t) {
            AutogradMeta m = t.autograd;
            if (m == null || m.gradFn != null || !m.requiresGrad) {
                throw new IllegalStateException("only leaf tensors that require grad have a gradient accumulator");
            }
            if (m.accumulator == null) {
                m.accumulator = new AccumulateGrad(t);
            }
            return m.accumulator;
        }
    }

    static void retainGrad(Tensor t) {
        AutogradMeta m = t.autograd;
        if (m != null && m.gradFn != null && !m.retainsGrad) {
            m.retainsGrad = true;
            t.registerHook(g -> {
                m.grad = m.grad == null ? g.clone() : m.grad.add(g);
                MemoryScope.detach(m.grad);
                return g;
            });
        }
    }

    static void detach(Tensor t) {
        AutogradMeta m = t.autograd;
        if (m != null) {
            m.gradFn = null;
            m.requiresGrad = false;
        }
    }

    /**
     * Called by every in-place op: refuses to change a leaf that requires grad (while recording) or a view
     * of a tensor in the graph, where the gradient would silently be wrong.
     */
    static void checkInplace(Tensor t, String op) {
        if (!Autograd.isGradEnabled()) {
            return;
        }
        Tensor base = t.base();
        if (isLeafThatRequiresGrad(t)) {
            throw new IllegalStateException("a leaf tensor that requires grad is being used in an in-place"
                    + " operation (" + op + "); do it inside Autograd.noGrad() or on a clone()");
        }
        if (base != null && isLeafThatRequiresGrad(base)) {
            throw new IllegalStateException("a view of a leaf tensor that requires grad is being used in an in-place"
                    + " operation (" + op + "); do it inside Autograd.noGrad() or on a clone()");
        }
        if (base != null && t.autograd != null && t.autograd.viewMadeWithoutGrad && base.requiresGrad()) {
            // Its history was never recorded, so the write could not be either (PyTorch refuses it too).
            throw new IllegalStateException("a view made in noGrad mode (or by split/chunk) is being modified in"
                    + " place (" + op + ") with grad mode enabled; take the view with grad enabled, or clone() it");
        }
    }

    private static boolean isLeafThatRequiresGrad(Tensor t) {
        AutogradMeta m = t.autograd;
        return m != null && m.requiresGrad && m.gradFn == null;
    }

    private static int historyVersion(Tensor base) {
        AutogradMeta m = base.autograd;
        return m == null ? 0 : m.historyVersion;
    }

    /** Records that a recorded in-place op rewrote this base tensor's history, so its views rebuild theirs. */
    static void bumpHistory(Tensor base) {
        of(base).historyVersion++;
    }

    /** Marks a new view's history as current with respect to its base, and notes the grad mode it was made in. */
    static void syncView(Tensor view) {
        Tensor base = view.base();
        if (base == null) {
            return;
        }
        int version = historyVersion(base);
        boolean withoutGrad = !Autograd.isGradEnabled();
        if (version != 0 || withoutGrad || view.autograd != null) {
            AutogradMeta m = of(view);
            m.viewVersion = version;
            m.viewMadeWithoutGrad = withoutGrad;
        }
    }
}
