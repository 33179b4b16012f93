package io.tensorbus.spi;

/** The binary element-wise arithmetic a {@link DeviceRuntime} runs for tensors on its devices. */
public enum ElementwiseOp {
    /** {@code a + b}. */
    ADD,
    /** {@code a - b}. */
    SUB,
    /** {@code a * b}. */
    MUL,
    /** {@code a / b}, floating point only. */
    DIV
}
