/**
 * Distributed autograd, as {@code torch.distributed.autograd} (issue 14, under construction: nothing here is
 * public yet). The design is in {@code docs/dist-autograd-design.md}: contexts that collect the send and recv
 * functions an RPC attaches to the graph, and the gradients of one distributed backward pass.
 *
 * <p>Threads: a context is used from the thread that opened it, the virtual threads that run the calls it
 * reached, and the RPC event loops that deliver its messages; its state is concurrent, and a container hands
 * contexts out from any thread.
 */
package io.tensorbus.distributed.autograd;
