package io.tensorbus.nn;

import io.tensorbus.tensor.Generator;

/** What {@link Dropout} and {@link Dropout2d} share: the probability, its check, and the random source. */
abstract class DropoutLayer extends Module {
    /** The probability of zeroing. */
    final double p;
    /** The random source, or null for the default generator. */
    final Generator generator;

    DropoutLayer(double p, Generator generator) {
        if (!(p >= 0 && p <= 1)) {
            throw new IllegalArgumentException("dropout probability has to be between 0 and 1, but got " + p);
        }
        this.p = p;
        this.generator = generator;
    }

    @Override
    protected String extraRepr() {
        return "p=" + p;
    }
}
