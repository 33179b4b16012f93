/**
 * Shared memory between two processes of one host, for transports to share: a
 * {@link io.tensorbus.spi.support.shm.SharedMemoryChannel} (a {@code /dev/shm} file holding a
 * {@link io.tensorbus.spi.support.shm.SharedMemoryRing} each way, deleted as soon as both sides mapped it) and a
 * {@link io.tensorbus.spi.support.shm.SharedMemoryLink} that moves a connection's frames through it on the connection's
 * event loop, the socket kept as doorbell and sign of life. The tcp backend's peer connections and the RPC
 * agent's connections use them. For a whole group of one host, a
 * {@link io.tensorbus.spi.support.shm.SharedMemoryArea}: one file every member maps, with two buffers and a
 * control line per member, where collectives compute in place. User code never imports this package.
 *
 * <p>Threads: a link reads, pumps its queue and closes on its connection's event loop; any thread may write a
 * whole frame into it ({@code tryWriteNow}, {@code writeOrCopy}), one at a time under the link's producer lock.
 * A ring has one producer and one consumer, each possibly in another process. Each member writes only its own
 * control line and buffers of an area, from one thread at a time.
 */
package io.tensorbus.spi.support.shm;
