package io.tensorbus.backend.nccl;

import io.vertx.core.Promise;

/**
 * One operation the backend enqueued: what it was (for messages), when, the event recorded after it, and the
 * promise its caller waits on. Completed or failed by the {@link NcclWatchdog}.
 *
 * @param description for example {@code allReduce(float32[1024], SUM) #7}
 * @param sequence the collective's number in the group, or -1 for point-to-point
 * @param startNanos {@link System#nanoTime()} when it was enqueued
 * @param event the CUDA event recorded after its work
 * @param promise what its caller waits on
 */
record NcclWork(String description, long sequence, long startNanos, long event, Promise<Void> promise) {
}
