/**
 * Saving and resuming data-parallel training: {@link io.tensorbus.distributed.checkpoint.Checkpoint} (rank 0
 * writes, every rank reads), its file format and the atomic directory writer under it.
 *
 * <p>Threads: the blocking {@code save} and {@code load} do their file I/O on the calling thread and refuse an
 * event loop; {@code saveAsync} and {@code loadAsync} return at once from any thread, do it on a virtual thread
 * and complete on the caller's Vert.x context when there is one.
 */
package io.tensorbus.distributed.checkpoint;
