/**
 * Tensors and RPC functions on the Vert.x event bus: {@link io.tensorbus.distributed.eventbus.TensorMessageCodec}
 * sends tensors between verticles (no copy in one JVM, the project's tensor format across a cluster), and
 * {@link io.tensorbus.distributed.eventbus.EventBusBridge} serves a worker's RPC functions at event-bus addresses,
 * every message proving the job's secret.
 *
 * <p>Threads: the bridge's consumers run on the event loop that delivers to them and hand each proven call to the RPC
 * agent's pool; answers are sent from the thread that completes the call; {@code call}'s future completes on the
 * event bus's context.
 */
package io.tensorbus.distributed.eventbus;
