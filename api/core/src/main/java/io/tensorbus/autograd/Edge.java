package io.tensorbus.autograd;

/**
 * One arrow of the backward graph: the gradient for input {@code inputNr} of {@code node}
 * (which is the gradient of the forward op's output number {@code inputNr}).
 */
public record Edge(Node node, int inputNr) {
}
