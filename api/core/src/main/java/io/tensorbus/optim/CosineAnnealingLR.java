package io.tensorbus.optim;

/**
 * Cosine annealing of each group's learning rate from its {@code initial_lr} down to {@code etaMin} over
 * {@code tMax} epochs, then back up ({@code torch.optim.lr_scheduler.CosineAnnealingLR}), with PyTorch 1.13's
 * recursive (chainable) formula so that values match PyTorch step by step:
 * {@code lr_e = (1 + cos(pi e / tMax)) / (1 + cos(pi (e - 1) / tMax)) * (lr_{e-1} - etaMin) + etaMin}, with
 * PyTorch's special cases at epoch 0, at the first step of a resumed schedule, and at the restart epochs
 * {@code (e - 1 - tMax) % (2 tMax) == 0}.
 */
public final class CosineAnnealingLR extends LRScheduler {
    private final int tMax;
    private final double etaMin;

    /**
     * A fresh schedule.
     *
     * @param tMax the number of epochs of a half cosine period (at least 1)
     * @param etaMin the minimum learning rate (finite, at least 0; PyTorch's default is 0)
     * @throws IllegalArgumentException for a bad {@code tMax} or {@code etaMin}
     */
    public CosineAnnealingLR(Optimizer optimizer, int tMax, double etaMin) {
        this(optimizer, tMax, etaMin, -1);
    }

    /**
     * A schedule resumed after epoch {@code lastEpoch} (-1 for a fresh one).
     *
     * @throws IllegalArgumentException for a bad {@code tMax}, {@code etaMin} or {@code lastEpoch}, or a group
     *     without {@code initial_lr} when resuming
     */
    public CosineAnnealingLR(Optimizer optimizer, int tMax, double etaMin, int lastEpoch) {
        super(checked(optimizer, tMax, etaMin), lastEpoch);
        this.tMax = tMax;
        this.etaMin = etaMin;
        initialStep();
    }

    /** Checks the arguments before the base class touches the optimizer's groups. */
    private static Optimizer checked(Optimizer optimizer, int tMax, double etaMin) {
        if (tMax < 1) {
            throw new IllegalArgumentException("tMax must be at least 1 epoch, got " + tMax);
        }
        if (!(etaMin >= 0) || !Double.isFinite(etaMin)) {
            throw new IllegalArgumentException("etaMin must be a finite learning rate >= 0, got " + etaMin);
        }
        return optimizer;
    }

    @Override
    protected double[] computeLr() {
        int e = lastEpoch();
        double[] lrs = currentLrs();
        double[] base = baseLrs();
        for (int i = 0; i < lrs.length; i++) {
            lrs[i] = next(e, lrs[i], base[i]);
        }
        return lrs;
    }

    private double next(int e, double lr, double base) {
        if (e == 0) {
            return lr;
        } else if (stepCount() == 1 && e > 0) {
            return etaMin + (base - etaMin) * (1 + Math.cos(e * Math.PI / tMax)) / 2;
        } else if ((e - 1 - tMax) % (2 * tMax) == 0) {
            return lr + (base - etaMin) * (1 - Math.cos(Math.PI / tMax)) / 2;
        }
        return (1 + Math.cos(Math.PI * e / tMax)) / (1 + Math.cos(Math.PI * (e - 1) / tMax)) * (lr - etaMin) + etaMin;
    }
}
