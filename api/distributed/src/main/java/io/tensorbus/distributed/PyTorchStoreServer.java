package io.tensorbus.distributed;

import io.tensorbus.c10d.JobSecret;
import io.tensorbus.distributed.impl.PyTorchStoreConnection;
import io.tensorbus.distributed.impl.StoreState;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.net.NetServer;
import java.util.Objects;

/**
 * A TCPStore that PyTorch clients use as their own ({@code torch.distributed.TCPStore(host, port, is_master=False)},
 * or the {@code store} of {@code init_process_group}), speaking PyTorch 1.13's wire: the JVM side of a mixed job can
 * host its store. JVM code reaches it as PyTorch's own master does, through a client
 * ({@link PyTorchTcpStore#connect}). Keys are kept as the wire carries them, so Python's and the JVM's clients see the
 * same keys. PyTorch's protocol authenticates nothing: on an address other than loopback anyone who reaches the port
 * may read and change the job's keys, and starting there says so loudly. The 2.2+ wire and key watches
 * ({@code WATCH_KEY}) are not served: such a connection is closed, saying why. Thread-safe.
 */
public final class PyTorchStoreServer implements AutoCloseable {
    private static final System.Logger LOG = System.getLogger(PyTorchStoreServer.class.getName());

    private final NetServer server;
    private final String host;

    private PyTorchStoreServer(NetServer server, String host) {
        this.server = server;
        this.host = host;
    }

    /**
     * Serves an empty store on {@code host:port} (port 0: a free one).
     *
     * @return the server once it listens; failed naming the address when the port is taken
     * @throws IllegalArgumentException for a port outside 0..65535
     */
    public static Future<PyTorchStoreServer> start(Vertx vertx, String host, int port) {
        Objects.requireNonNull(vertx, "vertx");
        Objects.requireNonNull(host, "host");
        if (port < 0 || port > 65535) {
            throw new IllegalArgumentException("a TCPStore port is in 0..65535 (0: a free one), got " + port);
        }
        if (!JobSecret.isLoopback(host)) {
            LOG.log(System.Logger.Level.WARNING, "serving PyTorch's TCPStore protocol on {0}: it authenticates"
                    + " nothing, so anyone who reaches port {1} may read and change this job's keys", host, port);
        }
        StoreState state = new StoreState();
        NetServer server = vertx.createNetServer();
        server.connectHandler(socket -> PyTorchStoreConnection.serve(socket, state));
        return server.listen(port, host).transform(r -> r.succeeded()
                ? Future.<PyTorchStoreServer>succeededFuture(new PyTorchStoreServer(r.result(), host))
                : Future.<PyTorchStoreServer>failedFuture(new IllegalStateException("cannot serve a PyTorch TCPStore"
                        + " on " + host + ":" + port + ": " + r.cause().getMessage(), r.cause())));
    }

    /** The port it listens on. */
    public int port() {
        return server.actualPort();
    }

    /** The address it listens on. */
    public String host() {
        return host;
    }

    /** Stops listening and closes the connections; idempotent. */
    @Override
    public void close() {
        closeAsync();
    }

    /** {@link #close()}, completing once closed. */
    public Future<Void> closeAsync() {
        return server.close();
    }
}
