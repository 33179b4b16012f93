/**
 * Internals the I/O, checkpoint and RPC code share: the JSON reader and writer of manifests and parity files,
 * and the byte view of tensors. Not an API.
 *
 * <p>Threads: the calling thread.
 */
package io.tensorbus.internal.io;
