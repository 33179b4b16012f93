package io.tensorbus.autograd;

import io.tensorbus.DType;
import io.tensorbus.Device;
import io.tensorbus.tensor.Tensor;
import java.util.Arrays;

/**
 * The node that {@link Autograd#record} attaches to the outputs of a differentiable op: it runs the op's
 * {@link BackwardFunction}, fills gradients of unused outputs with zeros, and reduces each input's gradient
 * to that input's shape and dtype (undoing broadcasting and type promotion).
 */
final class FunctionNode extends Node {
    private final String name;
    private final int[][] outputShapes;
    private final DType[] outputDTypes;
    private final Device[] outputDevices;
    private final int[][] inputShapes;
    private final DType[] inputDTypes;
    private BackwardFunction backward;

    FunctionNode(String name, Edge[] edges, Tensor[] inputs, Tensor[] outputs, BackwardFunction backward) {
        super(edges, outputs.length);
        this.name = name;
        this.backward = backward;
        this.outputShapes = new int[outputs.length][];
        this.outputDTypes = new DType[outputs.length];
        this.outputDevices = new Device[outputs.length];
        for (int i = 0; i < outputs.length; i++) {
            outputShapes[i] = outputs[i].shape();
            outputDTypes[i] = outputs[i].dtype();
            outputDevices[i] = outputs[i].device();
        }
        this.inputShapes = new int[inputs.length][];
        this.inputDTypes = new DType[inputs.length];
        for (int i = 0; i < inputs.length; i++) {
            if (inputs[i] != null) {
                inputShapes[i] = inputs[i].shape();
                inputDTypes[i] = inputs[i].dtype();
            }
        }
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    protected Tensor[] apply(Tensor[] gradOutputs) {
        BackwardFunction fn = backward;
        if (fn == null) {
            throw new IllegalStateException("Trying to backward through the graph a second time (or directly "
                    + "access saved tensors after they have already been freed) in " + name + ". Saved "
                    + "intermediate values of the graph are freed when you call backward() or grad(). Pass "
                    + "retainGraph=true if you need to backward through the graph a second time.");
        }
        Tensor[] grads = gradOutputs.clone();
        for (int i = 0; i < grads.length; i++) {
            if (grads[i] == null) {
                grads[i] = Tensor.zeros(outputDevices[i], outputDTypes[i], outputShapes[i]);
            }
        }
        Tensor[] result;
        try (GradMode.Scope ignored = Autograd.noGrad()) {
            result = fn.apply(grads);
            Edge[] edges = edges();
            if (result.length != edges.length) {
                throw new IllegalStateException(name + " returned " + result.length + " gradients for "
                        + edges.length + " inputs");
            }
            for (int i = 0; i < result.length; i++) {
                result[i] = edges[i] == null || result[i] == null ? null : fit(result[i], i);
            }
        }
        return result;
    }

    private Tensor fit(Tensor grad, int input) {
        Tensor g = grad;
        if (!Arrays.equals(g.shape(), inputShapes[input])) {
            g = g.sumToShape(inputShapes[input]);
        }
        if (g.dtype() != inputDTypes[input] && inputDTypes[input].isFloatingPoint()) {
            g = g.to(inputDTypes[input]);
        }
        return g;
    }

    @Override
    protected void releaseVariables() {
        backward = null;
    }
}
