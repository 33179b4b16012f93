package io.tensorbus.nn;

import io.tensorbus.tensor.Tensor;
import java.util.Objects;

/** Cross entropy of logits against int64 class targets, as {@code torch.nn.CrossEntropyLoss}. */
public final class CrossEntropyLoss {
    private final Tensor weight;
    private final int ignoreIndex;
    private final Reduction reduction;

    /** Mean reduction, no class weights, ignore index -100. */
    public CrossEntropyLoss() {
        this(null, -100, Reduction.MEAN);
    }

    /** With class weights (or null), an ignored target value and a reduction. */
    public CrossEntropyLoss(Tensor weight, int ignoreIndex, Reduction reduction) {
        this.weight = weight;
        this.ignoreIndex = ignoreIndex;
        this.reduction = Objects.requireNonNull(reduction, "reduction");
    }

    /** The loss of {@code logits} ({@code [N, C, ...]}) at {@code target} ({@code [N, ...]}). */
    public Tensor forward(Tensor logits, Tensor target) {
        return Functional.crossEntropy(logits, target, weight, ignoreIndex, reduction);
    }
}
