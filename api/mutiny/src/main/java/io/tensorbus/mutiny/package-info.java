/**
 * Mutiny {@code Uni} views of the asynchronous APIs ({@link io.tensorbus.mutiny.UniProcessGroup}), for
 * applications written with Mutiny.
 *
 * <p>Threads: a {@code Uni} starts its operation on subscription, on the subscribing thread, and emits on the
 * thread that completes the underlying future (an event loop: do not compute or block downstream).
 */
package io.tensorbus.mutiny;
