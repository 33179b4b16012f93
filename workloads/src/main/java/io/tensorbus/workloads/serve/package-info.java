/**
 * Train, then serve ({@code tensorbus run train-then-serve}): DDP training, a serving RPC worker reached over the
 * Vert.x event bus, and an HTTP verticle (vertx-web) in front, with the process's meters on Prometheus.
 *
 * <p>Threads: training runs on rank threads; the HTTP verticle's handlers on its event loop; {@code classify} on the
 * RPC agent's pool, one call at a time.
 */
package io.tensorbus.workloads.serve;
