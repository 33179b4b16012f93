/**
 * The implementation of distributed autograd that the RPC agent drives: contexts and their container, the send and
 * recv functions recorded as messages are encoded and decoded, and the FAST-mode engine. Not an API: users reach it
 * through {@code io.tensorbus.distributed.autograd.DistAutograd}.
 *
 * <p>Threads: recording runs on the threads that encode messages (callers, pool threads) and on the event loops
 * that decode them; a backward pass runs on the worker's pool, one thread at a time per context (its monitor);
 * everything else is thread-safe.
 */
package io.tensorbus.internal.distributed.autograd;
