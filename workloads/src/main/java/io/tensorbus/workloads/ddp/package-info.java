/**
 * The DDP Fashion-MNIST workload: {@link io.tensorbus.workloads.ddp.DdpFashionMnistVerticle}, one rank as a
 * Vert.x verticle for {@code VertxApplication}, the legacy {@code Launcher run} and {@code tensorbus launch};
 * {@link io.tensorbus.workloads.ddp.DdpConfig}, its JSON config; {@link
 * io.tensorbus.workloads.ddp.DdpFashionMnistTraining}, the training of one rank with {@code DistributedDataParallel};
 * and {@link io.tensorbus.workloads.ddp.DdpFashionMnistCommand}, {@code tensorbus run ddp-fashion-mnist}.
 *
 * <p>Threads: the verticle trains on a thread of its own, never on its event loop; the group's I/O runs on
 * Vert.x event loops.
 */
package io.tensorbus.workloads.ddp;
