/**
 * The parameter-server workload, PyTorch's parameter-server RPC tutorial on Fashion-MNIST:
 * {@link io.tensorbus.workloads.ps.ParameterServerVerticle}, one worker as a Vert.x verticle;
 * {@link io.tensorbus.workloads.ps.ParameterServerConfig}, its JSON config;
 * {@link io.tensorbus.workloads.ps.ParameterServerWorker}, one worker's part (the server holds the network,
 * the trainers run the forward pass on it through RPC, the distributed backward pass and a
 * {@code DistributedOptimizer}); and {@link io.tensorbus.workloads.ps.ParameterServerCommand},
 * {@code tensorbus run parameter-server}. The workers meet through {@code cluster://} on a Vert.x clustered
 * over Hazelcast (loopback, phone-home off).
 *
 * <p>Threads: the verticle runs its worker on a thread of its own; the trainers train inside the server's
 * RPC call, on the RPC agent's virtual threads; RPC I/O runs on Vert.x event loops.
 */
package io.tensorbus.workloads.ps;
