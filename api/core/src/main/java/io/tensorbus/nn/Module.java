package io.tensorbus.nn;

import io.tensorbus.Device;
import io.tensorbus.autograd.Autograd;
import io.tensorbus.internal.tensor.Shapes;
import io.tensorbus.internal.tensor.TensorInternals;
import io.tensorbus.tensor.MemoryScope;
import io.tensorbus.tensor.Tensor;
import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.function.Consumer;

/**
 * A building block of a network, as PyTorch's {@code torch.nn.Module}: it owns parameters (tensors that
 * require grad), buffers (state such as BatchNorm's running statistics) and child modules, each registered
 * by name in order, so that {@link #parameters()} and {@link #stateDict()} list them with PyTorch's
 * dotted keys ({@code layer1.0.conv1.weight}) and a state dict saved from PyTorch loads unchanged.
 */
public abstract class Module {
    private final Map<String, Tensor> parameters = new LinkedHashMap<>();
    private final Map<String, Tensor> buffers = new LinkedHashMap<>();
    private final Map<String, Module> children = new LinkedHashMap<>();
    private boolean training = true;

    /**
     * Computes the module's output.
     *
     * @throws IllegalArgumentException when the input's shape does not fit, naming the module and both shapes
     */
    public abstract Tensor forward(Tensor input);

    /** One line describing the module's configuration, as PyTorch's {@code extra_repr} (empty by default). */
    protected String extraRepr() {
        return "";
    }

    /**
     * Registers a parameter under {@code name} and marks it as requiring grad; returns it.
     *
     * @throws IllegalArgumentException for a bad or duplicate name, or a non-floating tensor
     */
    protected final Tensor registerParameter(String name, Tensor value) {
        checkName(name);
        Objects.requireNonNull(value, "value");
        if (!value.isLeaf()) {
            throw new IllegalArgumentException("parameter '" + name + "' must be a leaf tensor; pass detach() of it");
        }
        value.requiresGrad(true);
        MemoryScope.detach(value);
        parameters.put(name, value);
        return value;
    }

    /** Registers a buffer (saved in the state dict, not trained) under {@code name}; returns it. */
    protected final Tensor registerBuffer(String name, Tensor value) {
        checkName(name);
        MemoryScope.detach(Objects.requireNonNull(value, "value"));
        buffers.put(name, value);
        return value;
    }

    /** Registers a child module under {@code name}; returns it. */
    protected final <M extends Module> M registerModule(String name, M module) {
        checkName(name);
        children.put(name, Objects.requireNonNull(module, "module"));
        return module;
    }

    private void checkName(String name) {
        if (name == null || name.isEmpty() || name.contains(".")) {
            throw new IllegalArgumentException("name '" + name + "' must be non-empty and contain no '.'");
        }
        if (parameters.containsKey(name) || buffers.containsKey(name) || children.containsKey(name)) {
            throw new IllegalArgumentException("'" + name + "' is already registered in " + getClass().getSimpleName());
        }
    }

    /** Every parameter of this module and its descendants, in PyTorch's order. */
    public final List<Tensor> parameters() {
        return List.copyOf(namedParameters().values());
    }

    /** Parameters by dotted name ({@code layer1.0.conv1.weight}), in PyTorch's order. */
    public final Map<String, Tensor> namedParameters() {
        Map<String, Tensor> out = new LinkedHashMap<>();
        for (Map.Entry<String, Module> m : namedModules().entrySet()) {
            String prefix = m.getKey().isEmpty() ? "" : m.getKey() + ".";
            m.getValue().parameters.forEach((n, t) -> out.put(prefix + n, t));
        }
        return out;
    }

    /** Every buffer of this module and its descendants. */
    public final List<Tensor> buffers() {
        return List.copyOf(namedBuffers().values());
    }

    /** Buffers by dotted name ({@code bn1.running_mean}). */
    public final Map<String, Tensor> namedBuffers() {
        Map<String, Tensor> out = new LinkedHashMap<>();
        for (Map.Entry<String, Module> m : namedModules().entrySet()) {
            String prefix = m.getKey().isEmpty() ? "" : m.getKey() + ".";
            m.getValue().buffers.forEach((n, t) -> out.put(prefix + n, t));
        }
        return out;
    }

    /** The direct children, in registration order. */
    public final List<Module> children() {
        return List.copyOf(children.values());
    }

    /** The direct children by name. */
    public final Map<String, Module> namedChildren() {
        return Collections.unmodifiableMap(children);
    }

    /** This module and all its descendants, depth first. */
    public final List<Module> modules() {
        return List.copyOf(namedModules().values());
    }

    /** This module (under "") and all descendants by dotted name, depth first. */
    public final Map<String, Module> namedModules() {
        Map<String, Module> out = new LinkedHashMap<>();
        collect("", this, out);
        return out;
    }

    private static void collect(String prefix, Module m, Map<String, Module> out) {
        out.put(prefix, m);
        m.children.forEach((n, c) -> collect(prefix.isEmpty() ? n : prefix + "." + n, c, out));
    }

    /** Sets training mode (dropout active, BatchNorm uses batch statistics) on this module and its descendants. */
    public final Module train(boolean mode) {
        for (Module m : modules()) {
            m.training = mode;
        }
        return this;
    }

    /** {@code train(true)}. */
    public final Module train() {
        return train(true);
    }

    /** {@code train(false)}: inference mode. */
    public final Module eval() {
        return train(false);
    }

    /** True in training mode. */
    public final boolean isTraining() {
        return training;
    }

    /** Runs {@code fn} on every module, children first, then this one (as PyTorch's {@code apply}). */
    public final Module apply(Consumer<Module> fn) {
        for (Module c : children.values()) {
            c.apply(fn);
        }
        fn.accept(this);
        return this;
    }

    /**
     * Moves every parameter and buffer of this module and its children to {@code device} in place, as PyTorch's
     * {@code module.to(device)}: the tensors stay the objects layers and optimizers hold, their data (and
     * gradients) now live on the device. Returns this module.
     *
     * @throws IllegalArgumentException (from the device runtime) for a device that does not exist here
     */
    public final Module to(Device device) {
        Objects.requireNonNull(device, "device");
        try (var ignored = Autograd.noGrad()) {
            for (Module m : modules()) {
                for (Tensor t : m.parameters.values()) {
                    move(t, device);
                }
                for (Tensor t : m.buffers.values()) {
                    move(t, device);
                }
            }
        }
        return this;
    }

    /**
     * Where this module's first parameter lives, where its inputs go: after {@link #to(Device)}, that device;
     * {@link Device#CPU} for a module without parameters.
     */
    public final Device device() {
        List<Tensor> params = parameters();
        return params.isEmpty() ? Device.CPU : params.getFirst().device();
    }

    private static void move(Tensor t, Device device) {
        if (!t.device().equals(device)) {
            TensorInternals.setData(t, t.detach().to(device));
        }
    }

    /** Clears every parameter's gradient: sets it to null when {@code setToNull}, else zeroes it in place. */
    public final void zeroGrad(boolean setToNull) {
        for (Tensor p : parameters()) {
            if (p.grad() == null) {
                continue;
            }
            if (setToNull) {
                p.setGrad(null);
            } else {
                try (var ignored = Autograd.noGrad()) {
                    p.grad().zeroi();
                }
            }
        }
    }

    /** {@code zeroGrad(false)}: zeroes in place, PyTorch 1.13's default (as {@code Optimizer.zeroGrad()}). */
    public final void zeroGrad() {
        zeroGrad(false);
    }

    /** Parameters and buffers by dotted name, in PyTorch's state-dict order; the tensors themselves, not copies. */
    public final Map<String, Tensor> stateDict() {
        Map<String, Tensor> out = new LinkedHashMap<>();
        for (Map.Entry<String, Module> m : namedModules().entrySet()) {
            String prefix = m.getKey().isEmpty() ? "" : m.getKey() + ".";
            m.getValue().parameters.forEach((n, t) -> out.put(prefix + n, t));
            m.getValue().buffers.forEach((n, t) -> out.put(prefix + n, t));
        }
        return out;
    }

    /** What {@link #loadStateDict} did not match: keys the module expected but did not get, and the reverse. */
    public record LoadResult(List<String> missingKeys, List<String> unexpectedKeys) {
    }

    /**
     * Copies the values of {@code state} into this module's parameters and buffers (converting dtypes).
     *
     * @param strict when true, missing or unexpected keys are an error listing all of them
     * @throws IllegalArgumentException for a shape mismatch (naming the key and both shapes), or key
     *     mismatches in strict mode
     */
    public final LoadResult loadStateDict(Map<String, Tensor> state, boolean strict) {
        Map<String, Tensor> own = stateDict();
        List<String> missing = own.keySet().stream().filter(k -> !state.containsKey(k)).toList();
        List<String> unexpected = state.keySet().stream().filter(k -> !own.containsKey(k)).toList();
        if (strict && (!missing.isEmpty() || !unexpected.isEmpty())) {
            throw new IllegalArgumentException("error loading state dict into " + getClass().getSimpleName()
                    + ": missing keys " + missing + ", unexpected keys " + unexpected);
        }
        for (Map.Entry<String, Tensor> e : own.entrySet()) {
            Tensor src = state.get(e.getKey());
            if (src != null && !Arrays.equals(src.shape(), e.getValue().shape())) {
                throw new IllegalArgumentException("size mismatch for " + e.getKey() + ": copying a param with shape "
                        + Shapes.str(src.shape()) + ", the shape in the current model is "
                        + Shapes.str(e.getValue().shape()));
            }
        }
        try (var ignored = Autograd.noGrad()) {
            own.forEach((k, t) -> {
                Tensor src = state.get(k);
                if (src != null) {
                    t.copyi(src);
                }
            });
        }
        return new LoadResult(missing, unexpected);
    }

    /** The module tree as PyTorch prints it: {@code Sequential(\n  (0): Linear(in_features=2, ...)\n)}. */
    @Override
    public String toString() {
        String head = getClass().getSimpleName() + "(" + extraRepr();
        if (children.isEmpty()) {
            return head + ")";
        }
        StringBuilder sb = new StringBuilder(head).append('\n');
        children.forEach((n, c) -> sb.append("  (").append(n).append("): ")
                .append(c.toString().replace("\n", "\n  ")).append('\n'));
        return sb.append(')').toString();
    }
}
