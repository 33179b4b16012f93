/**
 * The local training demo ({@code tensorbus run local-demo}): the tutorial's network on Fashion-MNIST in one
 * process.
 *
 * <p>Threads: trains on {@code main}.
 */
package io.tensorbus.workloads.demo;
