package io.tensorbus.data;

import io.tensorbus.tensor.Tensor;
import java.util.ArrayList;
import java.util.List;

/** The default collate function of a {@link DataLoader}, as PyTorch's {@code default_collate} for tensors. */
public final class Collate {
    private Collate() {
    }

    /**
     * Stacks items along a new first dimension: each item a {@link Tensor} (a batch without targets), or a
     * {@code List<Tensor>} of one tensor (inputs) or two (inputs, targets), as {@link TensorDataset} and
     * {@link FashionMnist} return.
     *
     * @throws IllegalArgumentException for an empty list, items of another type or length, or shapes that differ
     */
    public static Batch stack(List<?> items) {
        if (items == null || items.isEmpty()) {
            throw new IllegalArgumentException("collate needs at least one item");
        }
        int width = width(items.get(0), 0);
        List<Tensor> inputs = new ArrayList<>(items.size());
        List<Tensor> targets = new ArrayList<>(width == 2 ? items.size() : 0);
        for (int i = 0; i < items.size(); i++) {
            Object item = items.get(i);
            if (width(item, i) != width) {
                throw new IllegalArgumentException("collate: item " + i + " holds " + width(item, i)
                        + " tensors but item 0 holds " + width);
            }
            inputs.add(part(item, 0));
            if (width == 2) {
                targets.add(part(item, 1));
            }
        }
        return new Batch(Tensor.stack(inputs, 0), width == 2 ? Tensor.stack(targets, 0) : null);
    }

    /** How many tensors an item holds: 1 or 2. */
    static int width(Object item, int i) {
        if (item instanceof Tensor) {
            return 1;
        }
        if (item instanceof List<?> list && (list.size() == 1 || list.size() == 2)) {
            return list.size();
        }
        String what = item == null ? "null" : item instanceof List<?> l ? "a list of " + l.size() + " elements"
                : "a " + item.getClass().getName();
        throw new IllegalArgumentException("default collate stacks a Tensor or a List<Tensor> of 1 (inputs) or 2"
                + " (inputs, targets) tensors per item, but item " + i + " is " + what
                + "; pass DataLoader.Builder.collate(...) for other items");
    }

    private static Tensor part(Object item, int k) {
        Object t = item instanceof List<?> list ? list.get(k) : item;
        if (t instanceof Tensor tensor) {
            return tensor;
        }
        throw new IllegalArgumentException("default collate needs tensors, got "
                + (t == null ? "null" : t.getClass().getName()) + " at position " + k + " of an item");
    }
}
