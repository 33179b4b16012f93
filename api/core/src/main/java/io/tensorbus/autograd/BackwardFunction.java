package io.tensorbus.autograd;

import io.tensorbus.tensor.Tensor;

/**
 * The backward formula of one differentiable op: gradients of its outputs in, gradients of its inputs out.
 * It runs with gradient recording off. An entry may be {@code null} for an input that needs no gradient.
 */
@FunctionalInterface
public interface BackwardFunction {
    /**
     * @param gradOutputs one gradient per forward output, never null (missing ones are zeros)
     * @return one gradient per forward input, in the order the inputs were recorded
     */
    Tensor[] apply(Tensor[] gradOutputs);
}
