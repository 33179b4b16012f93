package io.tensorbus.distributed.optim;

import io.tensorbus.optim.Adagrad;
import io.tensorbus.optim.Adam;
import io.tensorbus.optim.AdamW;
import io.tensorbus.optim.Optimizer;
import io.tensorbus.optim.ParamGroup;
import io.tensorbus.optim.SGD;
import io.tensorbus.tensor.Tensor;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * Which local optimizer a {@link DistributedOptimizer} makes on each worker that owns parameters, and its options:
 * what PyTorch passes as {@code optimizer_class, *args, **kwargs}. It travels to the owners as a name and PyTorch's
 * option names ({@code lr}, {@code momentum}, {@code betas}, {@code weight_decay}, ...), so no class is loaded by
 * a name from the network.
 *
 * @param optimizer {@code SGD}, {@code Adam}, {@code AdamW} or {@code Adagrad}
 * @param options the optimizer's options by PyTorch name: numbers, booleans, or lists of numbers for {@code betas}
 */
public record OptimizerSpec(String optimizer, Map<String, Object> options) {
    private static final List<String> KNOWN = List.of("SGD", "Adam", "AdamW", "Adagrad");

    /**
     * @throws IllegalArgumentException for an optimizer other than the four
     * @throws NullPointerException when an argument is null
     */
    public OptimizerSpec {
        Objects.requireNonNull(optimizer, "optimizer");
        if (!KNOWN.contains(optimizer)) {
            throw new IllegalArgumentException("optimizer '" + optimizer + "': the distributed optimizer makes "
                    + String.join(", ", KNOWN));
        }
        options = Map.copyOf(Objects.requireNonNull(options, "options"));
    }

    /** {@code optim.SGD} with learning rate {@code lr}. */
    public static OptimizerSpec sgd(double lr) {
        return new OptimizerSpec("SGD", Map.of(ParamGroup.LR, lr));
    }

    /** {@code optim.Adam} with learning rate {@code lr}. */
    public static OptimizerSpec adam(double lr) {
        return new OptimizerSpec("Adam", Map.of(ParamGroup.LR, lr));
    }

    /** {@code optim.AdamW} with learning rate {@code lr}. */
    public static OptimizerSpec adamW(double lr) {
        return new OptimizerSpec("AdamW", Map.of(ParamGroup.LR, lr));
    }

    /** {@code optim.Adagrad} with learning rate {@code lr}. */
    public static OptimizerSpec adagrad(double lr) {
        return new OptimizerSpec("Adagrad", Map.of(ParamGroup.LR, lr));
    }

    /** This spec with option {@code key} (PyTorch's name, such as {@code momentum}) set to {@code value}. */
    public OptimizerSpec with(String key, Object value) {
        Map<String, Object> o = new LinkedHashMap<>(options);
        o.put(Objects.requireNonNull(key, "key"), Objects.requireNonNull(value, "value"));
        return new OptimizerSpec(optimizer, o);
    }

    /**
     * The local optimizer over {@code params}, one group with these options.
     *
     * @throws IllegalArgumentException for an unknown or out-of-range option, or no parameters
     */
    Optimizer build(List<Tensor> params) {
        return buildGroups(List.of(ParamGroup.of(params)));
    }

    /**
     * The local optimizer over {@code groups}, this spec's options filling in what a group does not set (they are
     * the optimizer's defaults, as PyTorch's {@code **kwargs}).
     *
     * @throws IllegalArgumentException for an unknown or out-of-range option
     */
    Optimizer buildGroups(List<ParamGroup> groups) {
        for (ParamGroup group : groups) {
            options.forEach((key, value) -> {
                if (!group.options().containsKey(key)) {
                    group.set(key, value);
                }
            });
        }
        return switch (optimizer) {
            case "SGD" -> SGD.builder().buildGroups(groups);
            case "Adam" -> Adam.builder().buildGroups(groups);
            case "AdamW" -> AdamW.builder().buildGroups(groups);
            default -> Adagrad.builder().buildGroups(groups);
        };
    }
}
