/**
 * Process groups, as {@code torch.distributed}: {@link io.tensorbus.distributed.Distributed#initProcessGroup}
 * with the {@code env://}, {@code tcp://}, {@code file://} and {@code cluster://} init methods,
 * {@link io.tensorbus.distributed.ProcessGroup} (point-to-point, collectives, object collectives), groups made
 * from groups ({@link io.tensorbus.distributed.Distributed#newGroup}) and the stores
 * ({@link io.tensorbus.distributed.HashStore}, {@link io.tensorbus.distributed.TcpStore},
 * {@link io.tensorbus.distributed.FileStore}, {@link io.tensorbus.distributed.PrefixStore},
 * {@link io.tensorbus.distributed.ClusterStore}).
 *
 * <p>Threads: every operation is called from any thread and returns a Vert.x future at once; network I/O runs
 * on Vert.x event loops and the futures complete there, so continuations must not compute or block. The
 * blocking forms ({@code send}, {@code recv}, {@code await}) wait off the event loop only. tensorbus's Vert.x
 * threads are daemons: a process ends when its program does.
 */
package io.tensorbus.distributed;
