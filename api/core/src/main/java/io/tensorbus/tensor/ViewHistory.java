package io.tensorbus.tensor;

import io.tensorbus.autograd.Autograd;
import io.tensorbus.internal.tensor.Strided;
import java.util.stream.IntStream;

/**
 * Autograd for in-place writes through views (PyTorch's {@code CopySlices} and view regeneration): a
 * recorded in-place op on a view gives its base a new history in which the view's region comes from the
 * op's result and the rest from the base's old value; views of a base changed in place take their history
 * from the base's new one.
 */
final class ViewHistory {
    private ViewHistory() {
    }

    /** {@code buffer} seen with the shape, strides and (origin-relative) offset of {@code geometry}. */
    private static Tensor asStrided(Tensor buffer, Tensor geometry, long origin) {
        return new Tensor(buffer.storage(), buffer.dtype(), geometry.shape(), geometry.strides(),
                geometry.storageOffset() - origin, null);
    }

    /** The storage index of a non-empty tensor's last element (strides are never negative). */
    private static long lastElement(Tensor t) {
        long last = t.storageOffset();
        int[] sh = t.shape();
        int[] st = t.strides();
        for (int i = 0; i < sh.length; i++) {
            last += (long) Math.max(sh[i] - 1, 0) * st[i];
        }
        return last;
    }

    /** A zeroed buffer covering the storage range of {@code base}, in which base and view geometries apply. */
    private static Tensor window(Tensor base, Tensor like) {
        long extent = lastElement(base) - base.storageOffset() + 1;
        return Tensor.zeros(like.device(), like.dtype(), (int) Math.max(extent, 0));
    }

    /** Writes {@code result} into {@code view} and gives the view's base the history of that write. */
    static Tensor writeThroughView(Tensor view, Tensor result) {
        Tensor base = view.base();
        Tensor baseOld = base.detach();
        if (base.gradFn() != null) {
            AutogradMeta.setGradFn(baseOld, base.gradFn(), base.outputNr());
        }
        Strided.copy(result.view(), view.view(), view.shape());
        view.storage().bumpVersion();
        long origin = base.storageOffset();
        Tensor geometryOfView = view.detach();
        Tensor geometryOfBase = base.detach();
        Autograd.record("CopySlices", base, g -> {
            Tensor buf = window(geometryOfBase, g[0]);
            Strided.copy(g[0].view(), asStrided(buf, geometryOfBase, origin).view(), g[0].shape());
            Tensor region = asStrided(buf, geometryOfView, origin);
            Tensor gResult = region.clone();
            region.filli(0.0);
            return new Tensor[] {asStrided(buf, geometryOfBase, origin).clone(), gResult};
        }, baseOld, result);
        AutogradMeta.bumpHistory(base);
        return view;
    }

    /**
     * Rebuilds a view's history from its base's current history (an as-strided view of it). Expanded
     * dimensions (stride 0) map many elements to one, so their gradients are summed before the write back.
     */
    static void regenerate(Tensor view) {
        Tensor base = view.base();
        if (!base.requiresGrad()) {
            AutogradMeta.setGradFn(view, null, 0);
            return;
        }
        int[] shape = view.shape();
        int[] strides = view.strides();
        int[] expanded = IntStream.range(0, shape.length)
                .filter(i -> strides[i] == 0 && shape[i] > 1).toArray();
        for (int i : expanded) {
            shape[i] = 1;
        }
        long origin = base.storageOffset();
        Tensor geometryOfView = new Tensor(view.storage(), view.dtype(), shape, strides, view.storageOffset(), null);
        Tensor geometryOfBase = base.detach();
        try (var ignored = Autograd.enableGrad()) {
            Autograd.record("AsStridedBackward0", view, g -> {
                Tensor gv = expanded.length == 0 ? g[0] : g[0].sum(expanded, true);
                Tensor buf = window(geometryOfBase, gv);
                Strided.copy(gv.view(), asStrided(buf, geometryOfView, origin).view(), gv.shape());
                return new Tensor[] {asStrided(buf, geometryOfBase, origin).clone()};
            }, base);
        }
    }
}
