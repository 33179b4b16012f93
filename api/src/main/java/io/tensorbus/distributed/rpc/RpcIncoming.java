package io.tensorbus.distributed.rpc;

import io.tensorbus.distributed.rpc.impl.RpcFrame;
import io.tensorbus.distributed.rpc.impl.RpcFrameParser;
import io.tensorbus.distributed.rpc.impl.RpcHandshake;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.net.NetSocket;
import java.util.List;

/**
 * A connection a caller opened to this worker: a challenge when the caller asks, then, once it has proven the
 * shared secret and named itself as a worker of the job, its calls. Anything else closes the connection;
 * the process and the other connections go on.
 */
final class RpcIncoming {
    private final RpcAgent agent;
    private final NetSocket socket;
    private final byte[] challenge = RpcHandshake.challenge();
    private boolean challenged;
    private WorkerInfo caller;
    private boolean closed;

    RpcIncoming(RpcAgent agent, NetSocket socket) {
        this.agent = agent;
        this.socket = socket;
    }

    void start() {
        socket.handler(new RpcFrameParser(agent.options().maxMessageBytes(), this::frame, this::refuse));
        socket.exceptionHandler(e -> close());
        long deadline = agent.vertx().setTimer(agent.options().timeout().toMillis(), t -> {
            if (caller == null) {
                refuse("no proof of the shared secret within " + agent.options().timeout());
            }
        });
        socket.closeHandler(v -> {
            closed = true;
            agent.vertx().cancelTimer(deadline);
        });
    }

    void send(int kind, long id, byte[] body) {
        if (!closed) {
            socket.write(RpcFrame.encode(kind, id, body));
        }
    }

    void close() {
        closed = true;
        socket.close();
    }

    private void frame(RpcFrame.Header h, Buffer body) {
        try {
            if (h.kind() == RpcFrame.OPEN && !challenged) {
                challenged = true;
                send(RpcFrame.CHALLENGE, 0, agent.options().codec().encode(List.of(agent.self().name(), challenge)));
            } else if (h.kind() == RpcFrame.HELLO && challenged && caller == null) {
                hello(decode(body));
            } else if (h.kind() == RpcFrame.CALL && caller != null) {
                RpcServe.serve(agent, this, caller, h.id(), body.getBytes());
            } else {
                refuse("unexpected frame of kind " + h.kind() + (caller == null ? " before the handshake" : ""));
            }
        } catch (RuntimeException e) {
            refuse("a message that does not decode: " + e.getMessage());
        }
    }

    private void hello(List<Object> m) {
        String name = (String) m.get(0);
        int rank = ((Number) m.get(1)).intValue();
        byte[] proof = (byte[]) m.get(2);
        WorkerInfo claimed;
        try {
            claimed = agent.table().check(new WorkerInfo(name, rank));
        } catch (RuntimeException e) {
            refuse("'" + name + "' (rank " + rank + ") is not a worker of this job");
            return;
        }
        if (!RpcHandshake.verify(agent.options().secret(), challenge, name, agent.self().name(), proof)) {
            refuse("the proof of the shared secret from " + claimed + " is wrong (different or missing "
                    + RpcOptions.SECRET_ENV + ")");
            return;
        }
        caller = claimed;
        send(RpcFrame.WELCOME, 0, new byte[0]);
    }

    private void refuse(String why) {
        if (!closed) {
            send(RpcFrame.REFUSED, 0, agent.options().codec().encode(List.of(why)));
            close();
        }
    }

    @SuppressWarnings("unchecked")
    private List<Object> decode(Buffer body) {
        return (List<Object>) agent.options().codec().decode(body.getBytes(), List.class);
    }
}
