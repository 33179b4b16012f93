package io.tensorbus.optim;

import io.tensorbus.tensor.Tensor;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * A parameter group ({@code param_groups[i]} in PyTorch): the tensors one set of options applies to, and
 * those options as a small typed map keyed by PyTorch's names ({@code lr}, {@code weight_decay},
 * {@code betas}, ...).
 *
 * <p>Build one with {@link #of(List)} and override an optimizer's defaults with {@link #set}; options not
 * set here take the optimizer's defaults when the group is added to it. Values are numbers (kept as
 * {@code Double}), booleans, or, for {@code betas}, a list of two numbers (kept as {@code List<Double>}),
 * so that the options map is JSON-able as it is.
 */
public final class ParamGroup {
    /** Learning rate, in parameter units per gradient unit. */
    public static final String LR = "lr";
    /** The learning rate a scheduler started from (set by {@link LRScheduler}). */
    public static final String INITIAL_LR = "initial_lr";
    /** L2 penalty factor (SGD, Adam, Adagrad) or decoupled decay factor (AdamW). */
    public static final String WEIGHT_DECAY = "weight_decay";
    /** Whether the optimizer maximizes the objective instead of minimizing it. */
    public static final String MAXIMIZE = "maximize";
    /** SGD momentum factor. */
    public static final String MOMENTUM = "momentum";
    /** SGD dampening of the momentum. */
    public static final String DAMPENING = "dampening";
    /** SGD Nesterov momentum switch. */
    public static final String NESTEROV = "nesterov";
    /** Adam/AdamW running-average coefficients, a list of two numbers in [0, 1). */
    public static final String BETAS = "betas";
    /** Term added to denominators for numerical stability. */
    public static final String EPS = "eps";
    /** Adam/AdamW AMSGrad variant switch. */
    public static final String AMSGRAD = "amsgrad";
    /** Adagrad learning-rate decay per step. */
    public static final String LR_DECAY = "lr_decay";
    /** Adagrad's starting value of the squared-gradient sum. */
    public static final String INITIAL_ACCUMULATOR_VALUE = "initial_accumulator_value";

    private final List<Tensor> params;
    private final Map<String, Object> options = new LinkedHashMap<>();

    private ParamGroup(List<Tensor> params) {
        this.params = List.copyOf(params);
    }

    /**
     * A group of {@code params} with no options of its own.
     *
     * @throws NullPointerException when the list or one of its tensors is null
     */
    public static ParamGroup of(List<Tensor> params) {
        Objects.requireNonNull(params, "params");
        for (int i = 0; i < params.size(); i++) {
            Objects.requireNonNull(params.get(i), "parameter " + i + " is null");
        }
        return new ParamGroup(params);
    }

    /** A group of the given tensors with no options of its own. */
    public static ParamGroup of(Tensor... params) {
        return of(Arrays.asList(params));
    }

    /** The group's tensors, in order (unmodifiable). */
    public List<Tensor> params() {
        return params;
    }

    /** The group's options by PyTorch name, in insertion order (an unmodifiable, JSON-able view). */
    public Map<String, Object> options() {
        return Collections.unmodifiableMap(options);
    }

    /**
     * Sets an option, overriding the optimizer's default for this group; returns this. The optimizer checks
     * the value's range when the group is added; a change after that takes effect at the next step unchecked,
     * as in PyTorch.
     *
     * @param value a number, a boolean, or a list of numbers (for {@code betas})
     * @throws IllegalArgumentException for a value of another type, or a non-finite number
     */
    public ParamGroup set(String key, Object value) {
        options.put(Objects.requireNonNull(key, "key"), normalize(key, value));
        return this;
    }

    /** True when the group has a value for {@code key}. */
    public boolean has(String key) {
        return options.containsKey(key);
    }

    /**
     * The numeric option {@code key}.
     *
     * @throws IllegalStateException when it is absent or not a number
     */
    public double getDouble(String key) {
        if (get(key) instanceof Double d) {
            return d;
        }
        throw new IllegalStateException("option " + key + " is " + get(key) + ", not a number");
    }

    /**
     * The boolean option {@code key}.
     *
     * @throws IllegalStateException when it is absent or not a boolean
     */
    public boolean getBoolean(String key) {
        if (get(key) instanceof Boolean b) {
            return b;
        }
        throw new IllegalStateException("option " + key + " is " + get(key) + ", not a boolean");
    }

    /**
     * The list-of-numbers option {@code key} (such as {@code betas}).
     *
     * @throws IllegalStateException when it is absent or not a list
     */
    public double[] getDoubles(String key) {
        if (get(key) instanceof List<?> list) {
            return list.stream().mapToDouble(v -> (Double) v).toArray();
        }
        throw new IllegalStateException("option " + key + " is " + get(key) + ", not a list of numbers");
    }

    /** This group's learning rate. */
    public double lr() {
        return getDouble(LR);
    }

    /** Sets this group's learning rate (what a scheduler does); returns this. */
    public ParamGroup lr(double lr) {
        return set(LR, lr);
    }

    /** Replaces all options with already normalized and checked ones (the optimizer's job). */
    void replaceOptions(Map<String, Object> checked) {
        options.clear();
        options.putAll(checked);
    }

    private Object get(String key) {
        Object v = options.get(key);
        if (v == null) {
            throw new IllegalStateException("parameter group has no option " + key);
        }
        return v;
    }

    /** Numbers become Double, lists become unmodifiable lists of Double; anything else is refused. */
    static Object normalize(String key, Object value) {
        if (value instanceof Number n) {
            double d = n.doubleValue();
            if (!Double.isFinite(d)) {
                throw new IllegalArgumentException("option " + key + " must be a finite number, got " + d);
            }
            return d;
        }
        if (value instanceof Boolean) {
            return value;
        }
        if (value instanceof double[] a) {
            return normalize(key, Arrays.stream(a).boxed().toList());
        }
        if (value instanceof List<?> list) {
            List<Object> out = new ArrayList<>();
            for (Object o : list) {
                if (!(o instanceof Number)) {
                    throw new IllegalArgumentException("option " + key + " must be a list of numbers, got " + list);
                }
                out.add(normalize(key, o));
            }
            return List.copyOf(out);
        }
        throw new IllegalArgumentException("option " + key + " must be a number, a boolean or a list of numbers, got "
                + (value == null ? "null" : value.getClass().getSimpleName()));
    }
}
