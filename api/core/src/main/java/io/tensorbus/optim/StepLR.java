package io.tensorbus.optim;

/**
 * Multiplies each group's learning rate by {@code gamma} every {@code stepSize} epochs
 * ({@code torch.optim.lr_scheduler.StepLR}, chainable form): at epoch {@code e > 0} with
 * {@code e % stepSize == 0}, {@code lr *= gamma}; otherwise {@code lr} is left as it is.
 */
public final class StepLR extends LRScheduler {
    private final int stepSize;
    private final double gamma;

    /**
     * A fresh schedule; PyTorch's default {@code gamma} is 0.1.
     *
     * @param stepSize the period of the decay, in epochs (at least 1)
     * @param gamma the multiplicative factor (finite, greater than 0)
     * @throws IllegalArgumentException for a bad {@code stepSize} or {@code gamma}
     */
    public StepLR(Optimizer optimizer, int stepSize, double gamma) {
        this(optimizer, stepSize, gamma, -1);
    }

    /**
     * A schedule resumed after epoch {@code lastEpoch} (-1 for a fresh one).
     *
     * @throws IllegalArgumentException for a bad {@code stepSize}, {@code gamma} or {@code lastEpoch}, or a group
     *     without {@code initial_lr} when resuming
     */
    public StepLR(Optimizer optimizer, int stepSize, double gamma, int lastEpoch) {
        super(checked(optimizer, stepSize, gamma), lastEpoch);
        this.stepSize = stepSize;
        this.gamma = gamma;
        initialStep();
    }

    /** Checks the arguments before the base class touches the optimizer's groups. */
    private static Optimizer checked(Optimizer optimizer, int stepSize, double gamma) {
        if (stepSize < 1) {
            throw new IllegalArgumentException("stepSize must be at least 1 epoch, got " + stepSize);
        }
        if (!(gamma > 0) || !Double.isFinite(gamma)) {
            throw new IllegalArgumentException("gamma must be a finite factor greater than 0, got " + gamma);
        }
        return optimizer;
    }

    @Override
    protected double[] computeLr() {
        double[] lrs = currentLrs();
        if (lastEpoch() != 0 && lastEpoch() % stepSize == 0) {
            for (int i = 0; i < lrs.length; i++) {
                lrs[i] *= gamma;
            }
        }
        return lrs;
    }
}
