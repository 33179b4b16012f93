package io.tensorbus.distributed.rpc;

import io.vertx.core.http.ClientAuth;
import io.vertx.core.internal.net.NetSocketInternal;
import io.vertx.core.net.NetClientOptions;
import io.vertx.core.net.NetServerOptions;
import io.vertx.core.net.NetSocket;

/**
 * The one place the agent's sockets are configured: the server that accepts calls and the client that
 * opens connections to other workers, plain TCP or, with {@link RpcOptions#usesTls()}, mutual TLS.
 */
final class RpcTransport {
    /** The secret handshake's name for the connections between workers. */
    static final String CHANNEL = "rpc";

    /** No host-name check: workers are addressed by IP and trusted by their certificates alone. */
    private static final String NO_HOSTNAME_VERIFICATION = "";

    private RpcTransport() {
    }

    /**
     * True on {@code socket}'s event loop, the one thread that parses a connection's frames and touches its
     * parsing state (Netty's {@code inEventLoop()}); the frame handlers of both ends assert it.
     */
    static boolean onEventLoop(NetSocket socket) {
        return ((NetSocketInternal) socket).channelHandlerContext().executor().inEventLoop();
    }

    /** The options of the server accepting calls on {@code bindHost}, on a port the system picks. */
    static NetServerOptions serverOptions(RpcOptions o, String bindHost) {
        NetServerOptions s = new NetServerOptions().setHost(bindHost).setPort(0).setTcpNoDelay(true);
        if (o.usesTls()) {
            s.setSsl(true).setKeyCertOptions(o.tlsIdentity()).setTrustOptions(o.tlsTrust())
                    .setClientAuth(ClientAuth.REQUIRED);
        }
        return s;
    }

    /** The options of the client connecting to other workers, its connect timeout the default call timeout. */
    static NetClientOptions clientOptions(RpcOptions o) {
        NetClientOptions c = new NetClientOptions().setTcpNoDelay(true)
                .setConnectTimeout((int) Math.min(Integer.MAX_VALUE, o.timeout().toMillis()));
        if (o.usesTls()) {
            c.setSsl(true).setKeyCertOptions(o.tlsIdentity()).setTrustOptions(o.tlsTrust())
                    .setHostnameVerificationAlgorithm(NO_HOSTNAME_VERIFICATION);
        }
        return c;
    }
}
