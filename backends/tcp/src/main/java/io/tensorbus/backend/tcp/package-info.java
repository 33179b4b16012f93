/**
 * The default CPU backend {@code tcp}: a full mesh of authenticated Vert.x connections per process group,
 * fingerprinted frames written from off-heap memory, and the collective algorithms (rings, chains, binomial
 * trees, recursive doubling). Ranks of one host exchange the same frames through shared-memory rings
 * ({@code SharedMemoryChannel}), the socket kept as doorbell and sign of life.
 *
 * <p>Threads: each group runs on one Vert.x event loop. Its matching state (active collectives, the router of
 * arrived frames, departures) is touched on that loop only, which the entry points assert as Netty's
 * {@code inEventLoop()} does; calls from other threads hop onto it. The reductions of a collective run there
 * too, chunk by chunk as bytes arrive: they are the transport's own arithmetic, as gloo's are on its threads.
 */
package io.tensorbus.backend.tcp;
