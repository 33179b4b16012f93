/**
 * The communication types users and backends share, as PyTorch's c10d: {@link io.tensorbus.c10d.ReduceOp},
 * the rendezvous {@link io.tensorbus.c10d.Store}, the job's {@link io.tensorbus.c10d.JobSecret} and the
 * exceptions a failed communication raises ({@link io.tensorbus.c10d.CommunicationException} and its kinds).
 *
 * <p>Threads: the values are immutable; a store is called from any thread and returns futures at once, which
 * complete on the store's own thread (see each implementation).
 */
package io.tensorbus.c10d;
