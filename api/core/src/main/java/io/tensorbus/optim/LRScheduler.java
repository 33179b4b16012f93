package io.tensorbus.optim;

import java.util.Arrays;
import java.util.List;
import java.util.Objects;

/**
 * The base of learning-rate schedulers ({@code torch.optim.lr_scheduler._LRScheduler} in PyTorch 1.13): it
 * counts epochs ({@link #lastEpoch()}), asks the subclass for each group's new learning rate in PyTorch's
 * chainable (recursive) form, and writes it into the optimizer's groups.
 *
 * <p>As in PyTorch, construction performs one step (from {@code lastEpoch} to {@code lastEpoch + 1}), and
 * {@link #step()} belongs after {@code optimizer.step()}, once per epoch (or iteration). A fresh scheduler
 * ({@code lastEpoch == -1}) records each group's current {@code lr} as its {@code initial_lr}; a resumed
 * one reads {@code initial_lr} back. Subclass constructors must end by calling {@link #initialStep()}.
 */
public abstract class LRScheduler {
    private final Optimizer optimizer;
    private final double[] baseLrs;
    private int lastEpoch;
    private int stepCount;
    private double[] lastLr;

    /**
     * Attaches to {@code optimizer}.
     *
     * @param lastEpoch the index of the last epoch done: -1 for a fresh schedule
     * @throws IllegalArgumentException when {@code lastEpoch < -1}, or when resuming ({@code lastEpoch >= 0})
     *     and a group has no {@code initial_lr}
     */
    protected LRScheduler(Optimizer optimizer, int lastEpoch) {
        this.optimizer = Objects.requireNonNull(optimizer, "optimizer");
        if (lastEpoch < -1) {
            throw new IllegalArgumentException("lastEpoch must be -1 (a fresh schedule) or an epoch index >= 0, got "
                    + lastEpoch);
        }
        List<ParamGroup> groups = optimizer.paramGroups();
        baseLrs = new double[groups.size()];
        for (int i = 0; i < baseLrs.length; i++) {
            ParamGroup g = groups.get(i);
            if (lastEpoch == -1 && !g.has(ParamGroup.INITIAL_LR)) {
                g.set(ParamGroup.INITIAL_LR, g.lr());
            } else if (!g.has(ParamGroup.INITIAL_LR)) {
                throw new IllegalArgumentException("param 'initial_lr' is not specified in param_groups[" + i
                        + "] when resuming an optimizer (lastEpoch=" + lastEpoch + "); set it or use lastEpoch=-1");
            }
            baseLrs[i] = g.getDouble(ParamGroup.INITIAL_LR);
        }
        this.lastEpoch = lastEpoch;
    }

    /**
     * The learning rate of each group for epoch {@link #lastEpoch()} (already advanced), in PyTorch's
     * chainable form: from the groups' current {@code lr} where PyTorch does so.
     */
    protected abstract double[] computeLr();

    /** PyTorch's {@code _initial_step}: the first {@link #step()}; every subclass constructor ends with it. */
    protected final void initialStep() {
        stepCount = 0;
        step();
    }

    /** Advances one epoch and sets every group's {@code lr} to the scheduled value. */
    public void step() {
        stepCount++;
        lastEpoch++;
        double[] lrs = computeLr();
        List<ParamGroup> groups = optimizer.paramGroups();
        for (int i = 0; i < lrs.length; i++) {
            groups.get(i).lr(lrs[i]);
        }
        lastLr = lrs.clone();
    }

    /**
     * The learning rates the last step set, one per group ({@code get_last_lr()}).
     *
     * @throws IllegalStateException when a subclass constructor did not call {@link #initialStep()}
     */
    public List<Double> getLastLr() {
        if (lastLr == null) {
            throw new IllegalStateException(getClass().getSimpleName() + " has not stepped yet: its constructor"
                    + " must end with initialStep()");
        }
        return Arrays.stream(lastLr).boxed().toList();
    }

    /** The index of the last epoch stepped to (0 right after construction of a fresh schedule). */
    public int lastEpoch() {
        return lastEpoch;
    }

    /** The optimizer whose learning rates this schedules. */
    public Optimizer optimizer() {
        return optimizer;
    }

    /** The number of {@link #step()} calls so far, the one in the constructor included. */
    protected int stepCount() {
        return stepCount;
    }

    /** Each group's {@code initial_lr} (a copy). */
    protected double[] baseLrs() {
        return baseLrs.clone();
    }

    /** Each scheduled group's current {@code lr}. */
    protected double[] currentLrs() {
        double[] lrs = new double[baseLrs.length];
        for (int i = 0; i < lrs.length; i++) {
            lrs[i] = optimizer.paramGroups().get(i).lr();
        }
        return lrs;
    }
}
