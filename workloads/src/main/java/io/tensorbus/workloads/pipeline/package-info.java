/**
 * The seed's pipeline-parallel ResNet50 workload on {@link io.tensorbus.distributed.pipeline.Pipeline}:
 * {@link io.tensorbus.workloads.pipeline.PipelineResNet50}, one process (master or shard worker), and
 * {@link io.tensorbus.workloads.pipeline.PipelineResNet50Command}, {@code tensorbus run pipeline-resnet50}.
 *
 * <p>Threads: the master trains on its main thread; the shards run on the RPC agents' virtual threads, one
 * compute thread per process.
 */
package io.tensorbus.workloads.pipeline;
