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
