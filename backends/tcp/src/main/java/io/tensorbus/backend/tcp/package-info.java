/**
 * The default CPU backend {@code tcp}: a full mesh of authenticated Vert.x connections per process group,
 * fingerprinted frames written from off-heap memory, and the collective algorithms (rings, chains, binomial
 * trees, recursive doubling). Ranks of one host exchange the same frames through shared-memory rings
 * ({@code SharedMemoryChannel}), the socket kept as doorbell and sign of life; when all ranks of a group share
 * one host, host all-reduces, broadcasts and barriers go through one area they all map ({@code SharedMemoryArea},
 * {@link io.tensorbus.backend.tcp.SharedMemoryCollectives}).
 *
 * <p>Threads: each group runs on one Vert.x event loop. Its matching state (active collectives, the router of
 * arrived frames, departures) is touched on that loop only, which the entry points assert as Netty's
 * {@code inEventLoop()} does; calls from other threads hop onto it. The reductions of a collective run there
 * too, chunk by chunk as bytes arrive: they are the transport's own arithmetic, as gloo's are on its threads.
 * Collectives through the shared area run on the group's {@link io.tensorbus.backend.tcp.CollectiveThread}
 * instead, one at a time; they touch the area, announce their calls from the caller's thread, and hand failures
 * to the event loop, which breaks the group.
 */
package io.tensorbus.backend.tcp;
