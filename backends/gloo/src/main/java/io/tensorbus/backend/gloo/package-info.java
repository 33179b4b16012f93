/**
 * The {@code gloo} backend: PyTorch's gloo TCP transport and collective algorithms re-implemented on Vert.x, so a
 * JVM rank can be a member of a PyTorch job's gloo process group. {@link io.tensorbus.backend.gloo.GlooPair} speaks
 * the pair protocol (48-byte preambles; send and receive notices; data for the oldest announced receive of a slot),
 * {@link io.tensorbus.backend.gloo.GlooRendezvous} gloo's full-mesh rendezvous through the store (as PyTorch 1.13
 * links gloo, a socket per pair, or as 2.2 and later do, one socket per group and pairs named by sequence
 * numbers), and one class per algorithm reproduces gloo's messages, their sizes and their order.
 *
 * <p>Threads: each group runs on one Vert.x event loop; the pairs' state and the algorithms' steps are touched
 * there only, and calls from other threads hop onto it. Reductions run there too, segment by segment, as gloo
 * runs them on its calling thread.
 */
package io.tensorbus.backend.gloo;
