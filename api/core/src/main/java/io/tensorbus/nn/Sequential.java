package io.tensorbus.nn;

import io.tensorbus.tensor.Tensor;
import java.util.List;

/** Modules applied one after another, named {@code 0, 1, 2...} as {@code torch.nn.Sequential}. */
public final class Sequential extends Module {
    private final List<Module> layers;

    /**
     * @throws IllegalArgumentException when a module is null
     */
    public Sequential(Module... modules) {
        for (int i = 0; i < modules.length; i++) {
            if (modules[i] == null) {
                throw new IllegalArgumentException("Sequential: module " + i + " is null");
            }
            registerModule(Integer.toString(i), modules[i]);
        }
        this.layers = List.of(modules);
    }

    /** The module at {@code index}. */
    public Module get(int index) {
        return layers.get(index);
    }

    /**
     * The modules {@code from} (inclusive) to {@code to} (exclusive) as a new {@code Sequential} sharing them, as
     * {@code seq[from:to]} in PyTorch.
     *
     * @throws IllegalArgumentException unless {@code 0 <= from < to <= size()}
     */
    public Sequential slice(int from, int to) {
        if (from < 0 || from >= to || to > layers.size()) {
            throw new IllegalArgumentException("Sequential: slice " + from + " to " + to + " of " + layers.size()
                    + " modules; need 0 <= from < to <= " + layers.size());
        }
        return new Sequential(layers.subList(from, to).toArray(new Module[0]));
    }

    /** How many modules. */
    public int size() {
        return layers.size();
    }

    @Override
    public Tensor forward(Tensor x) {
        Tensor y = x;
        for (Module m : layers) {
            y = m.forward(y);
        }
        return y;
    }
}
