/**
 * Internals the distributed packages, the Hazelcast join and the launcher share: the bounded blocking wait behind
 * the blocking forms, and {@link io.tensorbus.internal.distributed.ProcessExit}, which closes what a program left
 * open when it ends and tells {@code tensorbus launch} why a rank failed. Not an API.
 *
 * <p>Threads: the blocking wait is used off the event loop only and fails on one; the exit hook runs on the JVM's
 * shutdown thread, the launcher watch on a daemon thread of its own.
 */
package io.tensorbus.internal.distributed;
