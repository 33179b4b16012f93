package io.tensorbus.data;

import io.tensorbus.tensor.Tensor;
import java.util.Arrays;
import java.util.Objects;

/**
 * One batch from a {@link DataLoader}: inputs and targets stacked along a new first dimension, as the
 * {@code (data, target)} pair a PyTorch training loop unpacks.
 *
 * @param inputs the inputs, {@code [B, ...]}
 * @param targets the targets, {@code [B, ...]}, or null for a dataset without targets
 */
public record Batch(Tensor inputs, Tensor targets) {
    /**
     * Checks the pair.
     *
     * @throws NullPointerException when {@code inputs} is null
     * @throws IllegalArgumentException when inputs and targets disagree on the batch size (dimension 0)
     */
    public Batch {
        Objects.requireNonNull(inputs, "inputs");
        if (targets != null && (inputs.dim() == 0 || targets.dim() == 0 || inputs.size(0) != targets.size(0))) {
            throw new IllegalArgumentException("inputs and targets must have the same size in dimension 0, got inputs "
                    + Arrays.toString(inputs.shape()) + " and targets " + Arrays.toString(targets.shape()));
        }
    }

    /** The number of items: the size of dimension 0 of the inputs (1 for a 0-d input). */
    public int size() {
        return inputs.dim() == 0 ? 1 : inputs.size(0);
    }

    /** Whether the batch has targets. */
    public boolean hasTargets() {
        return targets != null;
    }
}
