/**
 * Internals the distributed packages share: the bounded blocking wait behind the blocking forms. Not an API.
 *
 * <p>Threads: used off the event loop only; it fails on one.
 */
package io.tensorbus.internal.distributed;
