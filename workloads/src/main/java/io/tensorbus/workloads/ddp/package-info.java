/**
 * The DDP Fashion-MNIST workload: {@link io.tensorbus.workloads.ddp.DdpFashionMnistVerticle}, one rank as a
 * Vert.x verticle for {@code VertxApplication}, the legacy {@code Launcher run} and {@code tensorbus launch};
 * {@link io.tensorbus.workloads.ddp.DdpConfig}, its JSON config; {@link io.tensorbus.workloads.ddp.DdpFashionMnistTraining},
 * the training of one rank with {@code DistributedDataParallel}; and
 * {@link io.tensorbus.workloads.ddp.DdpFashionMnistCommand}, {@code tensorbus run ddp-fashion-mnist}.
 */
package io.tensorbus.workloads.ddp;
