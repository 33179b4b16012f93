package io.tensorbus.distributed.rpc;

import io.tensorbus.internal.distributed.autograd.DistAutogradRuntime;
import io.vertx.core.Vertx;

/**
 * Who this worker is and what it runs on: its identity, its options, the job's worker table, its Vert.x and its
 * distributed autograd. What most of the agent's collaborators need, without the agent itself.
 *
 * @param self this worker
 * @param options the agent's options (codec, timeouts, limits)
 * @param table every worker of the job, with addresses
 * @param vertx whose event loops run the connections and timers
 * @param autograd records the messages of distributed autograd contexts and serves their internal functions
 */
record LocalWorker(WorkerInfo self, RpcOptions options, RpcWorkerTable table, Vertx vertx,
                   DistAutogradRuntime autograd) {
}
