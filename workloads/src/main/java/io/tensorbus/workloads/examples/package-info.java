/**
 * The programs of PyTorch's tutorial "Writing distributed applications with PyTorch", one class each, written
 * against tensorbus: blocking and non-blocking point-to-point ({@link
 * io.tensorbus.workloads.examples.BlockingPointToPoint}, {@link
 * io.tensorbus.workloads.examples.NonBlockingPointToPoint}), an all-reduce in a subgroup ({@link
 * io.tensorbus.workloads.examples.GroupAllReduce}), the hand-written ring all-reduce ({@link
 * io.tensorbus.workloads.examples.RingAllReduceExample}) and distributed synchronous SGD ({@link
 * io.tensorbus.workloads.examples.SynchronousSgd} with {@link io.tensorbus.workloads.examples.DataPartitioner});
 * and of the RPC documents: remote references with a parameter server ({@link
 * io.tensorbus.workloads.examples.ParameterServerExample}) and the end-to-end example of distributed autograd
 * and the distributed optimizer ({@link io.tensorbus.workloads.examples.DistAutogradSimple}), which join the
 * job with {@code Rpc.init} and take an {@code RpcAgent} in {@code run} instead.
 *
 * <p>Each has a {@code main} that joins the job through {@code env://} (RANK, WORLD_SIZE, MASTER_ADDR,
 * MASTER_PORT), runs, and destroys its group, so that it runs as
 * {@code tensorbus launch --nproc-per-node 2 io.tensorbus.workloads.examples.BlockingPointToPoint}; and a
 * static {@code run(ProcessGroup)}, the tutorial's {@code run(rank, size)}, that tests call through
 * {@link io.tensorbus.distributed.Distributed#spawn}.
 *
 * <p>Threads: each example runs on {@code main} (or the rank's thread under {@code spawn}) and waits for its
 * futures there, never on an event loop.
 */
package io.tensorbus.workloads.examples;
