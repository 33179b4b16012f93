package io.tensorbus.backend.tcp;

import io.tensorbus.spi.Backend;
import io.tensorbus.spi.BackendOptions;
import io.tensorbus.spi.BackendProvider;
import io.vertx.core.Future;

/**
 * The default CPU backend, {@code "tcp"}: collectives and point-to-point messages between processes over
 * Vert.x TCP connections, one per pair of ranks. Always available. Settings read from
 * {@link BackendOptions#properties()}: {@code tcp.bindHost} (default {@code 127.0.0.1}),
 * {@code tcp.advertiseHost} (the address peers dial; default the bind host, or this host's address when
 * binding {@code 0.0.0.0}), {@code tcp.receiveBufferBytes} (SO_RCVBUF, default 8 MiB), {@code tcp.chunkBytes}
 * (pipeline chunk size; default 16 MiB over TCP and an eighth of a ring over shared memory, or the system property
 * {@code tensorbus.tcp.chunkBytes}; the group uses its smallest member's) and {@code tcp.handshakeMillis} (how long an
 * accepted connection may take to send its HELLO before it is dropped, default 10000).
 *
 * <p>Ranks on one host exchange their frames through shared memory instead of their sockets, unless
 * {@code tcp.sharedMemory=false}; see {@link SharedMemoryOptions} for its settings.
 */
public final class TcpBackendProvider implements BackendProvider {
    /** The name users select this backend by. */
    public static final String NAME = "tcp";

    /** Creates the provider; {@link java.util.ServiceLoader} calls this. */
    public TcpBackendProvider() {
    }

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public boolean isAvailable() {
        return true;
    }

    @Override
    public Throwable unavailabilityCause() {
        return null;
    }

    @Override
    public Future<Backend> create(BackendOptions options) {
        if (options == null) {
            throw new NullPointerException("options");
        }
        return Mesh.create(options);
    }
}
