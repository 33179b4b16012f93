package io.tensorbus.spi.archfixture;

import io.tensorbus.tensor.Tensor;

/** An SPI class that names the api's {@code Tensor}: {@code SPI_IMPORTS_NO_API} must report it. */
public final class PluginNamingTensor {
    private PluginNamingTensor() {
    }

    /** An api type in an SPI signature. */
    public static int rank(Tensor t) {
        return t.dim();
    }
}
