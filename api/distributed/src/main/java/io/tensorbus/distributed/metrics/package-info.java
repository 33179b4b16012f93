/**
 * Metrics of a running job through Micrometer: {@link io.tensorbus.distributed.metrics.TensorbusMetrics} binds an
 * application's registry (as Micrometer's binders do), and
 * {@link io.tensorbus.distributed.metrics.PrometheusEndpoint} serves them to Prometheus
 * ({@code tensorbus launch --metrics-port}). Off until a registry is bound, at the cost of a branch per operation.
 *
 * <p>Threads: operations are recorded on the threads that complete them (event loops, collective threads, callers);
 * gauges are read on the thread that scrapes or publishes a registry; the endpoint answers on its own event loop.
 */
package io.tensorbus.distributed.metrics;
