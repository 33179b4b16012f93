package io.tensorbus.optim;

import io.tensorbus.DType;
import io.tensorbus.autograd.Autograd;
import io.tensorbus.autograd.GradMode;
import io.tensorbus.tensor.MemoryScope;
import io.tensorbus.tensor.Tensor;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.function.Function;

/**
 * The base of every optimizer ({@code torch.optim.Optimizer}): parameter groups with per-group options that
 * override the optimizer's defaults, per-parameter state tensors, {@link #step()}, {@link #zeroGrad()}, and a
 * state dict in PyTorch's structure.
 *
 * <p>A subclass declares its option names ({@link #optionKeys()}), checks their values ({@link #validate}),
 * and updates one parameter ({@link #update}); this class loops over groups and parameters, skips those
 * whose gradient is null, negates the gradient for {@code maximize}, and runs everything in place under
 * {@link Autograd#noGrad()}. Not thread-safe: step an optimizer from one thread at a time.
 */
public abstract class Optimizer {
    /** The state key of the per-parameter step count (a float32 scalar tensor, as in PyTorch). */
    protected static final String STEP = "step";
    private static final Set<String> BOOLEAN_OPTIONS = Set.of(ParamGroup.MAXIMIZE, ParamGroup.NESTEROV,
            ParamGroup.AMSGRAD);

    private final Map<String, Object> defaults = new LinkedHashMap<>();
    private final List<ParamGroup> groups = new ArrayList<>();
    private final Map<Tensor, Map<String, Tensor>> state = new IdentityHashMap<>();

    /**
     * Checks {@code defaults} and adds each group (see {@link #addParamGroup}).
     *
     * @param groups the parameter groups, at least one
     * @param defaults the options a group does not set, by PyTorch name; an option absent here must be set by
     *     every group (as SGD's {@code lr} in PyTorch)
     * @throws IllegalArgumentException when there is no group, or an option is unknown or out of range
     */
    protected Optimizer(List<ParamGroup> groups, Map<String, Object> defaults) {
        Objects.requireNonNull(groups, "groups");
        if (groups.isEmpty()) {
            throw new IllegalArgumentException("optimizer got an empty parameter list");
        }
        Map<String, Object> d = checkedOptions(defaults, "defaults");
        validate(d);
        this.defaults.putAll(d);
        groups.forEach(this::addParamGroup);
    }

    /** The names of this optimizer's options (PyTorch's), each of which every group ends up with. */
    protected abstract Set<String> optionKeys();

    /**
     * Checks the ranges of the options present in {@code options} (a group's, or the defaults, where some may be
     * absent).
     *
     * @throws IllegalArgumentException saying which value is wrong and what is allowed
     */
    protected abstract void validate(Map<String, Object> options);

    /**
     * Updates one parameter in place. Called under {@link Autograd#noGrad()}, only for a parameter with a
     * gradient.
     *
     * @param group the parameter's group, for its options
     * @param grad the gradient, already negated when the group maximizes; never written to
     * @param state the parameter's state, which the method creates on first use and updates; tensors the method
     *     allocates and does not put here go back to the host cache when it returns (a {@link MemoryScope})
     */
    protected abstract void update(ParamGroup group, Tensor param, Tensor grad, Map<String, Tensor> state);

    /** Called when a group was added; Adagrad creates its state here. Does nothing by default. */
    protected void groupAdded(ParamGroup group) {
    }

    // ---------------------------------------------------------------- groups

    /** The parameter groups in order (unmodifiable; a group's options may be changed through it). */
    public List<ParamGroup> paramGroups() {
        return Collections.unmodifiableList(groups);
    }

    /** The options a group gets when it does not set them, by PyTorch name (unmodifiable). */
    public Map<String, Object> defaults() {
        return Collections.unmodifiableMap(defaults);
    }

    /**
     * Adds a group ({@code add_param_group}), for example to train layers unfrozen later: its missing options
     * are filled from the defaults, then checked.
     *
     * @throws IllegalArgumentException for an unknown or out-of-range option, a required option that neither the
     *     group nor the defaults give, a parameter that is not a leaf, a parameter listed twice, or a parameter
     *     already in another group
     */
    public void addParamGroup(ParamGroup group) {
        Objects.requireNonNull(group, "group");
        checkParams(group.params());
        Map<String, Object> merged = new LinkedHashMap<>(checkedOptions(group.options(), "parameter group"));
        defaults.forEach(merged::putIfAbsent);
        for (String key : optionKeys()) {
            if (!merged.containsKey(key)) {
                throw new IllegalArgumentException("parameter group didn't specify a value of required optimization"
                        + " parameter " + key);
            }
        }
        validate(merged);
        group.replaceOptions(merged);
        groups.add(group);
        groupAdded(group);
        detachState();
    }

    private void checkParams(List<Tensor> params) {
        Set<Tensor> seen = Collections.newSetFromMap(new IdentityHashMap<>());
        for (int i = 0; i < params.size(); i++) {
            Tensor p = params.get(i);
            if (!p.isLeaf()) {
                throw new IllegalArgumentException("can't optimize a non-leaf tensor (parameter " + i
                        + " of the group has a gradFn); optimize the leaves it was computed from");
            }
            if (!seen.add(p)) {
                throw new IllegalArgumentException("parameter " + i + " appears twice in the same parameter group");
            }
            for (ParamGroup other : groups) {
                if (other.params().stream().anyMatch(q -> q == p)) {
                    throw new IllegalArgumentException("some parameters appear in more than one parameter group"
                            + " (parameter " + i + " of the new group)");
                }
            }
        }
    }

    /** Normalized copy of {@code options}, refusing unknown names and values of the wrong type. */
    private Map<String, Object> checkedOptions(Map<String, Object> options, String where) {
        Objects.requireNonNull(options, where);
        Map<String, Object> out = new LinkedHashMap<>();
        options.forEach((k, v) -> {
            if (!optionKeys().contains(k) && !k.equals(ParamGroup.INITIAL_LR)) {
                throw new IllegalArgumentException(where + " has unknown option '" + k + "'; "
                        + getClass().getSimpleName() + " takes " + optionKeys() + " (and initial_lr)");
            }
            Object value = ParamGroup.normalize(k, v);
            boolean ok = BOOLEAN_OPTIONS.contains(k) ? value instanceof Boolean
                    : k.equals(ParamGroup.BETAS) ? value instanceof List<?> l && l.size() == 2
                    : value instanceof Double;
            if (!ok) {
                throw new IllegalArgumentException("option " + k + " must be "
                        + (BOOLEAN_OPTIONS.contains(k) ? "a boolean" : k.equals(ParamGroup.BETAS)
                        ? "a list of two numbers" : "a number") + ", got " + v);
            }
            out.put(k, value);
        });
        return out;
    }

    // ---------------------------------------------------------------- step and gradients

    /**
     * Performs one optimization step: updates every parameter that has a gradient, in place, without
     * recording autograd history. Parameters whose {@code grad()} is null are skipped and their state is
     * left as it is.
     */
    public void step() {
        step(Tensor::grad);
    }

    /**
     * Performs one optimization step with the gradients of {@code gradients} instead of {@code .grad}, as PyTorch's
     * functional optimizers behind {@code DistributedOptimizer} do with a distributed autograd context's
     * gradients. Parameters are looked up with {@code gradients.get} (an identity map for tensors); those without
     * one are skipped.
     *
     * @throws NullPointerException when {@code gradients} is null
     * @throws IllegalArgumentException when a gradient's shape differs from its parameter's
     */
    public void step(Map<Tensor, Tensor> gradients) {
        Objects.requireNonNull(gradients, "gradients");
        step(p -> {
            Tensor g = gradients.get(p);
            if (g != null && !Arrays.equals(g.shape(), p.shape())) {
                throw new IllegalArgumentException("a gradient of shape " + Arrays.toString(g.shape())
                        + " for a parameter of shape " + Arrays.toString(p.shape()));
            }
            return g;
        });
    }

    private void step(Function<Tensor, Tensor> gradientOf) {
        try (GradMode.Scope ignored = Autograd.noGrad()) {
            for (ParamGroup group : groups) {
                boolean maximize = group.getBoolean(ParamGroup.MAXIMIZE);
                for (Tensor p : group.params()) {
                    Tensor grad = gradientOf.apply(p);
                    if (grad != null) {
                        update(group, p, maximize, grad);
                    }
                }
            }
        }
    }

    /**
     * One parameter's update in a {@link MemoryScope} of its own: the temporaries {@link #update} makes go back to
     * the host cache as it returns, and only what it keeps in the parameter's state lives on.
     */
    private void update(ParamGroup group, Tensor p, boolean maximize, Tensor grad) {
        Map<String, Tensor> s = state.computeIfAbsent(p, k -> new LinkedHashMap<>());
        try (MemoryScope temporaries = MemoryScope.open()) {
            update(group, p, maximize ? grad.neg() : grad, s);
            s.values().forEach(MemoryScope::detach);
        }
    }

    /** Takes the state out of any open {@link MemoryScope}: it lives as long as the optimizer. */
    private void detachState() {
        state.values().forEach(s -> s.values().forEach(MemoryScope::detach));
    }

    /** Zeroes every parameter's gradient in place ({@code zero_grad()}; PyTorch 1.13's default keeps the tensors). */
    public void zeroGrad() {
        zeroGrad(false);
    }

    /**
     * Clears every parameter's gradient.
     *
     * @param setToNull true to drop the gradient tensors (the next step then skips parameters that get no new
     *     gradient), false to zero them in place, detached from any graph
     */
    public void zeroGrad(boolean setToNull) {
        try (GradMode.Scope ignored = Autograd.noGrad()) {
            for (ParamGroup group : groups) {
                for (Tensor p : group.params()) {
                    if (p.grad() != null && setToNull) {
                        p.setGrad(null);
                    } else if (p.grad() != null) {
                        p.grad().detachi().zeroi();
                    }
                }
            }
        }
    }

    /** The state of {@code param} by name (an unmodifiable view; empty before its first update). */
    public Map<String, Tensor> state(Tensor param) {
        Map<String, Tensor> s = state.get(param);
        return s == null ? Map.of() : Collections.unmodifiableMap(s);
    }

    /** The live, mutable state of {@code param}, created empty when absent: for subclasses. */
    protected Map<String, Tensor> stateOf(Tensor param) {
        return state.computeIfAbsent(param, k -> new LinkedHashMap<>());
    }

    // ---------------------------------------------------------------- state dict

    /**
     * A snapshot of the optimizer's state ({@code state_dict()}): parameters are numbered in order over the
     * groups, and every state tensor is copied (unlike PyTorch, which returns live references), so stepping on
     * afterwards does not change the snapshot.
     */
    public OptimizerState stateDict() {
        Map<Integer, Map<String, Tensor>> packed = new LinkedHashMap<>();
        List<Map<String, Object>> packedGroups = new ArrayList<>();
        int index = 0;
        for (ParamGroup group : groups) {
            List<Integer> ids = new ArrayList<>();
            for (Tensor p : group.params()) {
                Map<String, Tensor> s = state.get(p);
                if (s != null && !s.isEmpty()) {
                    Map<String, Tensor> copy = new LinkedHashMap<>();
                    s.forEach((k, t) -> copy.put(k, t.detach().clone()));
                    packed.put(index, copy);
                }
                ids.add(index++);
            }
            Map<String, Object> g = new LinkedHashMap<>(group.options());
            g.put(OptimizerState.PARAMS, ids);
            packedGroups.add(g);
        }
        return new OptimizerState(packed, packedGroups);
    }

    /**
     * Replaces this optimizer's state and group options with {@code saved} ({@code load_state_dict}): saved
     * parameter indices map in order onto this optimizer's parameters; state tensors are copied, floating ones
     * (except {@code step}, kept as float32) converted to their parameter's dtype. Nothing changes when a check
     * fails.
     *
     * @throws IllegalArgumentException when the number of groups, a group's number of parameters, or a state
     *     tensor's shape differs from this optimizer's, when state refers to an index no group lists, or when a
     *     saved option is unknown or out of range; the message says what differs
     */
    public void loadStateDict(OptimizerState saved) {
        Objects.requireNonNull(saved, "saved");
        List<Map<String, Object>> savedGroups = saved.paramGroups();
        if (savedGroups.size() != groups.size()) {
            throw new IllegalArgumentException("loaded state dict has " + savedGroups.size()
                    + " parameter groups but this optimizer has " + groups.size());
        }
        Map<Integer, Tensor> byIndex = new LinkedHashMap<>();
        List<Map<String, Object>> newOptions = new ArrayList<>();
        for (int g = 0; g < groups.size(); g++) {
            List<Integer> ids = saved.groupParams(g);
            List<Tensor> params = groups.get(g).params();
            if (ids.size() != params.size()) {
                throw new IllegalArgumentException("parameter group " + g + " of the loaded state dict has "
                        + ids.size() + " parameters but this optimizer's group " + g + " has " + params.size());
            }
            for (int i = 0; i < ids.size(); i++) {
                byIndex.put(ids.get(i), params.get(i));
            }
            newOptions.add(loadedOptions(g, savedGroups.get(g)));
        }
        Map<Tensor, Map<String, Tensor>> newState = new IdentityHashMap<>();
        saved.state().forEach((index, tensors) -> newState.put(paramFor(byIndex, index),
                castState(index, paramFor(byIndex, index), tensors)));
        for (int g = 0; g < groups.size(); g++) {
            groups.get(g).replaceOptions(newOptions.get(g));
        }
        state.clear();
        state.putAll(newState);
        detachState();
    }

    private Map<String, Object> loadedOptions(int g, Map<String, Object> savedGroup) {
        Map<String, Object> options = new LinkedHashMap<>(savedGroup);
        options.remove(OptimizerState.PARAMS);
        Map<String, Object> checked = checkedOptions(options, "loaded parameter group " + g);
        for (String key : optionKeys()) {
            checked.putIfAbsent(key, groups.get(g).options().get(key));
        }
        validate(checked);
        return checked;
    }

    private static Tensor paramFor(Map<Integer, Tensor> byIndex, int index) {
        Tensor p = byIndex.get(index);
        if (p == null) {
            throw new IllegalArgumentException("loaded state dict has state for parameter index " + index
                    + ", which none of its parameter groups lists (indices " + byIndex.keySet() + ")");
        }
        return p;
    }

    private static Map<String, Tensor> castState(int index, Tensor param, Map<String, Tensor> tensors) {
        Map<String, Tensor> out = new LinkedHashMap<>();
        tensors.forEach((key, t) -> {
            if (key.equals(STEP)) {
                out.put(key, t.detach().to(DType.FLOAT32).clone());
                return;
            }
            if (!Arrays.equals(t.shape(), param.shape())) {
                throw new IllegalArgumentException("state." + index + "." + key + " has shape "
                        + Arrays.toString(t.shape()) + " but parameter " + index + " has shape "
                        + Arrays.toString(param.shape()));
            }
            // As PyTorch's: state follows its parameter's dtype and device; the step count stays on the host.
            Tensor v = t.detach().to(param.device());
            out.put(key, (v.dtype().isFloatingPoint() ? v.to(param.dtype()) : v).clone());
        });
        return out;
    }

    // ---------------------------------------------------------------- helpers for subclasses

    /** {@code grad + weightDecay * param} (PyTorch's L2 penalty), or {@code grad} itself when the decay is 0. */
    protected static Tensor withWeightDecay(Tensor grad, Tensor param, double weightDecay) {
        return weightDecay != 0 ? grad.add(param, weightDecay) : grad;
    }

    /** The state tensor {@code key}, created as zeros shaped like {@code param} when absent. */
    protected static Tensor zerosState(Map<String, Tensor> state, String key, Tensor param) {
        return state.computeIfAbsent(key, k -> Tensor.zerosLike(param.detach()));
    }

    /** Adds one to the state's {@code step} (a float32 scalar, created at 0) and returns the new count. */
    protected static double incrementStep(Map<String, Tensor> state) {
        return stepState(state).addi(1.0).item();
    }

    /** The state's {@code step} count (a float32 scalar tensor), created at 0 when absent. */
    protected static Tensor stepState(Map<String, Tensor> state) {
        return state.computeIfAbsent(STEP, k -> Tensor.scalar(0.0, DType.FLOAT32));
    }

    /**
     * Throws unless {@code options} lacks {@code key} or its value is at least 0, with PyTorch's wording:
     * {@code Invalid learning rate: -0.1 (lr must be >= 0)}.
     */
    protected static void requireNonNegative(Map<String, Object> options, String key, String label) {
        if (options.get(key) instanceof Double v && !(v >= 0.0)) {
            throw new IllegalArgumentException("Invalid " + label + ": " + v + " (" + key + " must be >= 0)");
        }
    }

    /**
     * An ordered options map from alternating names and values: {@code options("lr", 0.1, "momentum", 0.9)}.
     *
     * @throws IllegalArgumentException for an odd number of arguments
     */
    protected static Map<String, Object> options(Object... namesAndValues) {
        if (namesAndValues.length % 2 != 0) {
            throw new IllegalArgumentException("expected name, value pairs, got " + namesAndValues.length + " items");
        }
        Map<String, Object> m = new LinkedHashMap<>();
        for (int i = 0; i < namesAndValues.length; i += 2) {
            m.put((String) namesAndValues[i], namesAndValues[i + 1]);
        }
        return m;
    }

    /**
     * One group of {@code params}, for the {@code (params, ...)} constructors.
     *
     * @throws IllegalArgumentException when {@code params} is empty
     */
    protected static ParamGroup singleGroup(List<Tensor> params) {
        if (params.isEmpty()) {
            throw new IllegalArgumentException("optimizer got an empty parameter list");
        }
        return ParamGroup.of(params);
    }

    /** An unmodifiable, ordered set of option names, for {@link #optionKeys()}. */
    protected static Set<String> keys(String... names) {
        return Collections.unmodifiableSet(new LinkedHashSet<>(List.of(names)));
    }

    /**
     * The shared part of every optimizer's builder: it starts from PyTorch's defaults, lets the caller change
     * them, and builds the optimizer over one list of parameters or over several groups. Values are checked
     * when the optimizer is built.
     *
     * @param <B> the concrete builder, returned by the setters for chaining
     * @param <O> the optimizer it builds
     */
    public abstract static class Builder<B extends Builder<B, O>, O extends Optimizer> {
        private final Map<String, Object> defaults = new LinkedHashMap<>();

        /** A builder whose defaults are {@code pytorchDefaults} (copied). */
        protected Builder(Map<String, Object> pytorchDefaults) {
            defaults.putAll(pytorchDefaults);
        }

        /** Creates the optimizer; the builder's {@code build} methods call it. */
        protected abstract O create(List<ParamGroup> groups, Map<String, Object> defaults);

        /** Sets the default of option {@code key} (PyTorch's name); returns this builder. */
        @SuppressWarnings("unchecked")
        protected B set(String key, Object value) {
            defaults.put(key, value);
            return (B) this;
        }

        /** The learning rate (parameter units per gradient unit; must be at least 0). */
        public B lr(double lr) {
            return set(ParamGroup.LR, lr);
        }

        /** The weight decay factor (must be at least 0; 0 turns it off). */
        public B weightDecay(double weightDecay) {
            return set(ParamGroup.WEIGHT_DECAY, weightDecay);
        }

        /** Maximizes the objective instead of minimizing it (default false). */
        public B maximize(boolean maximize) {
            return set(ParamGroup.MAXIMIZE, maximize);
        }

        /**
         * The optimizer over {@code params}, as one group with the builder's options.
         *
         * @throws IllegalArgumentException when {@code params} is empty or an option is out of range
         */
        public O build(List<Tensor> params) {
            return buildGroups(List.of(singleGroup(params)));
        }

        /**
         * The optimizer over several groups, each overriding some of the builder's options.
         *
         * @throws IllegalArgumentException when there is no group, or an option is unknown or out of range
         */
        public O buildGroups(List<ParamGroup> groups) {
            return create(groups, defaults);
        }
    }

    @Override
    public String toString() {
        StringBuilder b = new StringBuilder(getClass().getSimpleName()).append(" (");
        for (int i = 0; i < groups.size(); i++) {
            b.append("\nParameter Group ").append(i).append(' ').append(groups.get(i).options());
        }
        return b.append("\n)").toString();
    }
}
