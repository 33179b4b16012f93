package io.tensorbus.distributed.algorithms;

import io.tensorbus.autograd.Autograd;
import io.tensorbus.distributed.ProcessGroup;
import io.tensorbus.internal.distributed.Blocking;
import io.tensorbus.tensor.Tensor;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * {@code model_averaging.averagers.PeriodicModelAverager}: after {@code warmupSteps} calls, every {@code period}-th
 * call of {@link #averageParameters} replaces the parameters of every member with their mean over the group, the
 * model averaging of local SGD. Not thread-safe: call it from the training thread, on every member, once per step.
 */
public final class PeriodicModelAverager {
    private final int period;
    private final long warmupSteps;
    private final ProcessGroup group;
    private long step;

    /**
     * An averager over {@code group}.
     *
     * @param period steps between averages, at least 1 (1 costs as much as DDP's gradient all-reduce)
     * @param warmupSteps calls before the first average, at least 0
     * @throws IllegalArgumentException for a period below 1 or negative warm-up
     * @throws NullPointerException when {@code group} is null
     */
    public PeriodicModelAverager(int period, long warmupSteps, ProcessGroup group) {
        if (period < 1) {
            throw new IllegalArgumentException("period must be at least 1, got " + period);
        }
        if (warmupSteps < 0) {
            throw new IllegalArgumentException("warmupSteps must be at least 0, got " + warmupSteps);
        }
        this.period = period;
        this.warmupSteps = warmupSteps;
        this.group = Objects.requireNonNull(group, "group");
    }

    /** The calls of {@link #averageParameters} so far ({@code step}; saved with a checkpoint). */
    public long step() {
        return step;
    }

    /**
     * Sets the step counter, as loading a checkpoint does.
     *
     * @throws IllegalArgumentException when negative
     */
    public void setStep(long step) {
        if (step < 0) {
            throw new IllegalArgumentException("step must be at least 0, got " + step);
        }
        this.step = step;
    }

    /**
     * Averages the parameters that have a gradient when this call is due (PyTorch's {@code get_params_to_average}),
     * then counts the step. Blocks while it averages.
     *
     * @throws io.tensorbus.c10d.CommunicationException when the all-reduce fails or times out
     */
    public void averageParameters(List<Tensor> params) {
        Objects.requireNonNull(params, "params");
        if (step >= warmupSteps && (step - warmupSteps) % period == 0) {
            List<Tensor> withGradients = new ArrayList<>();
            for (Tensor p : params) {
                if (p.grad() != null) {
                    withGradients.add(p);
                }
            }
            average(withGradients, group);
        }
        step++;
    }

    /**
     * {@code model_averaging.utils.average_parameters}: replaces {@code params} on every member of {@code group}
     * with their mean over it, through one all-reduce of their concatenation (one dtype). Blocks.
     *
     * @throws IllegalArgumentException when the parameters mix dtypes
     * @throws io.tensorbus.c10d.CommunicationException when the all-reduce fails or times out
     */
    public static void average(List<Tensor> params, ProcessGroup group) {
        Objects.requireNonNull(group, "group");
        if (params.isEmpty() || !group.isMember()) {
            return;
        }
        Blocking.checkMayBlock("PeriodicModelAverager.average");
        int total = params.stream().mapToInt(Tensor::numel).sum();
        Tensor flat = Tensor.zeros(params.getFirst().device(), params.getFirst().dtype(), total);
        try (var ignored = Autograd.noGrad()) {
            int at = 0;
            for (Tensor p : params) {
                if (p.dtype() != flat.dtype()) {
                    throw new IllegalArgumentException("parameters of " + flat.dtype() + " and " + p.dtype()
                            + ": average them in groups of one dtype");
                }
                flat.narrow(0, at, p.numel()).copyi(p.reshape(-1));
                at += p.numel();
            }
            flat.divi(group.size());
        }
        Blocking.await(group.allReduce(flat), group.timeout().plusSeconds(5), "model averaging on rank "
                + group.globalRank(group.rank()));
        try (var ignored = Autograd.noGrad()) {
            int at = 0;
            for (Tensor p : params) {
                p.detach().copyi(flat.narrow(0, at, p.numel()).view(p.shape()));
                at += p.numel();
            }
        }
    }
}
