package io.tensorbus.distributed;

import io.tensorbus.distributed.impl.StoreState;
import io.tensorbus.distributed.impl.TcpStoreServer;
import io.vertx.core.Future;
import java.time.Duration;

/**
 * The process that runs a {@link TcpStore}'s server: its own calls go straight to the data the server serves,
 * without a socket, as a {@link HashStore} over that data.
 */
final class TcpStoreHost extends HashStore implements TcpStore {
    private final String host;
    private final TcpStoreServer server;

    TcpStoreHost(String host, TcpStoreServer server, StoreState state, Duration timeout) {
        super(state, timeout, "TcpStore server " + host + ":" + server.port());
        this.host = host;
        this.server = server;
    }

    @Override
    public int port() {
        return server.port();
    }

    @Override
    public String host() {
        return host;
    }

    @Override
    public boolean isServer() {
        return true;
    }

    /** The server's own requests are the TcpStore's, as its clients' are. */
    @Override
    String kind() {
        return "tcp";
    }

    @Override
    public void close() {
        closeAsync();
    }

    @Override
    public Future<Void> closeAsync() {
        super.close();
        return server.close();
    }
}
