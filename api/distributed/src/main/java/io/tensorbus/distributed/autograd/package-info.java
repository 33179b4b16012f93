/**
 * Distributed autograd, as {@code torch.distributed.autograd}: {@link io.tensorbus.distributed.autograd.DistAutograd}
 * records the RPCs of a forward pass in a context and runs their backward pass across the workers they reached.
 * The design is in {@code docs/dist-autograd-design.md}; the implementation is in
 * {@code io.tensorbus.internal.distributed.autograd}, which the RPC agent drives.
 *
 * <p>Threads: every method is thread-safe; a context is current on the thread that opened it and on the threads
 * that serve the calls it reached. The blocking {@code backward} must not run on an event loop.
 */
package io.tensorbus.distributed.autograd;
