/**
 * The {@code nccl} backend: NCCL's collectives and point-to-point calls through a hand-written FFM binding of
 * {@code libnccl.so.2} ({@link io.tensorbus.backend.nccl.NcclBackendProvider}), the communicator made from a
 * unique id exchanged through the c10d store, and a watchdog that aborts the communicator on a timeout or an
 * asynchronous NCCL error. It needs a CUDA device runtime for CUDA memory and streams, which tensorbus does not
 * have yet: until then the provider reports itself unavailable and says why.
 *
 * <p>Threads: callers return at once. One thread per group issues the NCCL calls in call order (NCCL needs the
 * same order on every rank, and its calls may block); one watchdog thread per group polls the CUDA events of
 * issued work, completes the futures, and asks NCCL for asynchronous errors every 100 ms. Communicator creation
 * ({@code ncclCommInitRank}, which blocks until every rank joined) runs on a Vert.x worker thread, bounded by the
 * group's timeout.
 */
package io.tensorbus.backend.nccl;
