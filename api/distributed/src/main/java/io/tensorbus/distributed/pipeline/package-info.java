/**
 * Pipeline parallelism over RPC ({@code torch.distributed.pipelining}'s idea on the RPC framework, as PyTorch's
 * pipeline-parallel ResNet50 tutorial builds it): {@link io.tensorbus.distributed.pipeline.Pipeline} streams a
 * batch in micro-batches through stage modules held by other workers, recorded by distributed autograd so that
 * a {@code DistributedOptimizer} trains every stage; {@link io.tensorbus.distributed.pipeline.PipelineStages} is
 * what the stage workers serve.
 *
 * <p>Threads: {@code forwardAsync} never blocks; the blocking methods wait within the agent's timeout and refuse
 * to run on an event loop; stage workers run each stage on the RPC agent's virtual threads, one micro-batch at
 * a time per stage.
 */
package io.tensorbus.distributed.pipeline;
