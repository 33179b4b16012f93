package io.tensorbus.nn;

import io.tensorbus.tensor.Tensor;
import java.util.Objects;

/** Negative log-likelihood of log-probabilities against int64 class targets, as {@code torch.nn.NLLLoss}. */
public final class NLLLoss {
    private final Tensor weight;
    private final int ignoreIndex;
    private final Reduction reduction;

    /** Mean reduction, no class weights, ignore index -100. */
    public NLLLoss() {
        this(null, -100, Reduction.MEAN);
    }

    /** With class weights (or null), an ignored target value and a reduction. */
    public NLLLoss(Tensor weight, int ignoreIndex, Reduction reduction) {
        this.weight = weight;
        this.ignoreIndex = ignoreIndex;
        this.reduction = Objects.requireNonNull(reduction, "reduction");
    }

    /** The loss of {@code logProbs} ({@code [N, C, ...]}) at {@code target} ({@code [N, ...]}). */
    public Tensor forward(Tensor logProbs, Tensor target) {
        return Functional.nllLoss(logProbs, target, weight, ignoreIndex, reduction);
    }
}
