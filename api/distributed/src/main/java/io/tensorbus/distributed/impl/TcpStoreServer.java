package io.tensorbus.distributed.impl;

import io.tensorbus.c10d.JobSecret;
import io.tensorbus.spi.support.SecretHandshake;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.net.NetServer;
import io.vertx.core.net.NetServerOptions;
import io.vertx.core.net.NetSocket;
import java.net.BindException;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The listening side of a {@code TcpStore}: a Vert.x {@link NetServer} whose connections serve one shared
 * {@link StoreState}. Each connection proves the job's secret first, then is a {@link TcpStoreConnection}; a
 * broken or refused one is closed alone.
 */
public final class TcpStoreServer {

    /** The secret handshake's name for store connections. */
    public static final String CHANNEL = "store";

    /**
     * The servers this JVM runs, per Vertx. Vert.x shares a port between the servers of one Vertx instance and
     * spreads connections over them, which would split one store into several: a second store server on the same
     * port is refused instead, as the OS refuses it across processes.
     */
    private static final Set<Binding> BOUND = ConcurrentHashMap.newKeySet();

    private record Binding(Vertx vertx, String host, int port) {
    }

    private final String host;
    /** Kept in a field: Vert.x may close servers that nothing references. */
    private final NetServer netServer;
    private final Set<TcpStoreConnection> connections = ConcurrentHashMap.newKeySet();
    private volatile Binding binding;

    private TcpStoreServer(Vertx vertx, String host, StoreState state, JobSecret secret) {
        this.host = host;
        this.netServer = vertx.createNetServer(new NetServerOptions().setTcpNoDelay(true));
        // Nothing of the store is read or written for a connection before it proves the job's secret.
        netServer.connectHandler(socket -> SecretHandshake.accept(socket, secret, CHANNEL, SecretHandshake.TIMEOUT,
                vertx)
                .onSuccess(v -> serve(vertx, socket, state)));
    }

    private void serve(Vertx vertx, NetSocket socket, StoreState state) {
        TcpStoreConnection connection = new TcpStoreConnection(vertx, socket, state, this::describe);
        connections.add(connection);
        socket.closeHandler(v -> {
            connections.remove(connection);
            connection.closed();
        });
    }

    /**
     * Binds a server on {@code host:port} (0 = a free port) serving {@code state} to the connections that prove
     * {@code secret}. Fails with a message naming the address when the port is in use, and when {@code host} is
     * not a loopback address and there is no secret.
     */
    public static Future<TcpStoreServer> listen(Vertx vertx, String host, int port, StoreState state,
            JobSecret secret) {
        try {
            secret.checkBind(host, "the TcpStore server");
        } catch (RuntimeException e) {
            return Future.failedFuture(e);
        }
        Binding wanted = port == 0 ? null : new Binding(vertx, host, port);
        if (wanted != null && !BOUND.add(wanted)) {
            return Future.failedFuture(inUse(host, port, "another TcpStore of this Vertx listens there"));
        }
        TcpStoreServer server = new TcpStoreServer(vertx, host, state, secret);
        server.binding = wanted;
        return server.netServer.listen(port, host).transform(result -> {
            if (result.failed()) {
                server.unbind();
                Throwable cause = result.cause();
                if (cause instanceof BindException || String.valueOf(cause.getMessage()).contains("in use")) {
                    return Future.failedFuture(inUse(host, port, cause.getMessage()));
                }
                return Future.failedFuture(new IllegalStateException("TcpStore server cannot listen on " + host
                        + ":" + port + ": " + cause, cause));
            }
            if (port == 0) {
                server.binding = new Binding(vertx, host, server.port());
                BOUND.add(server.binding);
            }
            return Future.succeededFuture(server);
        });
    }

    /** The port bound (the actual one when 0 was asked for). */
    public int port() {
        return netServer.actualPort();
    }

    /** Stops listening and closes every connection; their waiting calls are dropped. */
    public Future<Void> close() {
        unbind();
        for (TcpStoreConnection connection : connections) {
            connection.close();
        }
        return netServer.close();
    }

    private String describe() {
        return "TcpStore server " + host + ":" + port();
    }

    private void unbind() {
        Binding bound = binding;
        if (bound != null) {
            BOUND.remove(bound);
            binding = null;
        }
    }

    private static IllegalStateException inUse(String host, int port, String detail) {
        return new IllegalStateException("TcpStore server cannot listen on " + host + ":" + port
                + ": the port is in use (" + detail + "); pick another port, or 0 for a free one");
    }
}
