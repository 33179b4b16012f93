/**
 * How the process groups and stores of {@link io.tensorbus.distributed} work: rendezvous, the TcpStore's
 * client, server and wire protocol, the FileStore's log, store state and timers, object collectives. Not an
 * API.
 *
 * <p>Threads: the TcpStore's connections run on their Vert.x event loops; store state is guarded by its own
 * lock; waits time out on one shared daemon timer thread; a FileStore does its file I/O on a daemon thread of
 * its own.
 */
package io.tensorbus.distributed.impl;
