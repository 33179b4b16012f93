package io.tensorbus.distributed.rpc;

import io.tensorbus.distributed.rpc.impl.RpcFrame;
import io.tensorbus.distributed.rpc.impl.RpcFrameParser;
import io.tensorbus.spi.support.shm.SharedMemoryChannel;
import io.vertx.core.net.NetSocket;
import java.lang.foreign.MemorySegment;
import java.util.List;

/**
 * A connection a caller opened to this worker, after both sides proved the job's secret
 * ({@code SecretHandshake}): once the caller has named itself as a worker of the job (OPEN, answered with
 * WELCOME), its calls. Until then frames are limited to the handshake's size. Anything else refuses the
 * connection; the process and the other connections go on.
 */
final class RpcIncoming implements RpcFrameParser.FrameHandler {
    private final LocalWorker worker;
    private final RRefContext rrefs;
    private final RpcServe serve;
    private final RpcConnections connections;
    private final NetSocket socket;
    private volatile WorkerInfo caller;
    private volatile int callerMaxMessage;
    private volatile boolean closed;
    private RpcPayload.Decoded attached;
    private RpcFrameParser parser;
    private long deadline;
    private final RpcWire wire;

    RpcIncoming(LocalWorker worker, RRefContext rrefs, RpcServe serve, RpcConnections connections, NetSocket socket) {
        this.worker = worker;
        this.rrefs = rrefs;
        this.serve = serve;
        this.connections = connections;
        this.socket = socket;
        this.wire = new RpcWire(socket);
    }

    /** Installs the handlers; runs on the connection's event loop. */
    void start() {
        parser = new RpcFrameParser(
                () -> caller != null ? worker.options().maxMessageBytes() : RpcFrame.MAX_HANDSHAKE_BODY,
                this, this::refuse);
        parser.readFrom(socket);
        socket.exceptionHandler(e -> close());
        deadline = worker.vertx().setTimer(worker.options().timeout().toMillis(), t -> {
            if (caller == null) {
                refuse("no OPEN within " + worker.options().timeout());
            }
        });
        socket.closeHandler(v -> {
            // The caller gave this connection up (and failed what it sent here): bytes still queued behind a
            // paused or slow read are dropped, not run after the caller's later messages on a new connection.
            parser.stop();
            wire.stop();
            closed = true;
            wire.closed(new RpcException("the connection from " + (caller == null ? socket.remoteAddress() : caller)
                    + " closed"));
            worker.vertx().cancelTimer(deadline);
            connections.closed(this);
            if (caller != null) {
                // Its distributed autograd contexts here cannot finish any more.
                worker.autograd().workerLost(caller.id());
            }
        });
    }

    /** The largest message the caller accepts (its maxMessageBytes). */
    int callerMaxMessage() {
        return callerMaxMessage;
    }

    /** The worker that opened this connection, once it has named itself. */
    WorkerInfo caller() {
        return caller;
    }

    void send(int kind, long id, byte[] body) {
        send(kind, id, new RpcPayload.Encoded(body, List.of()));
    }

    /** Sends a frame; false when the connection is closed and nothing was sent. */
    boolean send(int kind, long id, RpcPayload.Encoded payload) {
        if (closed) {
            return false;
        }
        wire.send(kind, id, payload);
        return true;
    }

    /** True once this connection's frames go through shared memory. */
    boolean isSharedMemory() {
        return wire.isSharedMemory();
    }

    void close() {
        closed = true;
        socket.close();
    }

    @Override
    public void frame(RpcFrame.Header h, byte[] body) {
        assert RpcTransport.onEventLoop(socket) : "a frame of " + socket.remoteAddress() + " parsed off its event loop";
        try {
            if (h.kind() == RpcFrame.DOORBELL) {
                wire.doorbell();
            } else if (h.kind() == RpcFrame.OPEN && caller == null) {
                open(decode(body));
            } else if (h.kind() == RpcFrame.CALL && caller != null) {
                RpcPayload.Decoded call = h.hasAttachments() ? attached
                        : RpcPayload.decode(rrefs, body, 0);
                attached = null;
                serve.serve(this, h.id(), call, call.values());
            } else {
                refuse("unexpected frame of kind " + h.kind() + (caller == null ? " before the handshake" : ""));
            }
        } catch (RuntimeException e) {
            refuse("a message that does not decode: " + e.getMessage());
        }
    }

    /** Allocates the tensors of an incoming call; its bytes will be read straight into them. */
    @Override
    public List<MemorySegment> attachments(RpcFrame.Header h, byte[] body) {
        assert RpcTransport.onEventLoop(socket) : "a frame of " + socket.remoteAddress() + " parsed off its event loop";
        if (h.kind() != RpcFrame.CALL || caller == null) {
            throw new IllegalArgumentException("attachments on a frame of kind " + h.kind());
        }
        attached = RpcPayload.decode(rrefs, body,
                (long) worker.options().maxMessageBytes() - body.length);
        return attached.targets();
    }

    private void open(List<Object> m) {
        String name = (String) m.get(0);
        Object rank = m.get(1);
        if (!(rank instanceof Integer r)) {
            refuse("a rank that is not an int");
            return;
        }
        WorkerInfo claimed;
        try {
            claimed = worker.table().check(new WorkerInfo(name, r));
        } catch (RuntimeException e) {
            refuse("'" + name + "' (rank " + r + ") is not a worker of this job");
            return;
        }
        callerMaxMessage = Math.max(RpcFrame.MAX_HANDSHAKE_BODY, ((Number) m.get(2)).intValue());
        SharedMemoryChannel channel = RpcWire.accept(worker.options(), m.size() > 3 ? m.get(3) : null);
        caller = claimed;
        worker.vertx().cancelTimer(deadline);
        send(RpcFrame.WELCOME, 0, worker.options().codec().encode(List.of(worker.self().name(),
                worker.options().maxMessageBytes(), channel != null ? 1 : 0)));
        if (channel != null) {
            // The caller sends nothing before WELCOME, so every call comes through the channel.
            wire.useSharedMemory(channel, this, worker.options().maxMessageBytes(), this::refuse, () -> false);
        }
        connections.welcomed(this);
    }

    /**
     * The caller opened a newer connection, so it has given this one up (and failed the calls it sent
     * here): frames still unread here are dropped instead of being run late, after the caller's later
     * messages.
     */
    void supersede() {
        parser.stop();
        wire.stop();
        close();
    }

    private void refuse(String why) {
        parser.stop();
        wire.stop();
        if (!closed) {
            send(RpcFrame.REFUSED, 0, worker.options().codec().encode(List.of(why)));
            close();
        }
    }

    @SuppressWarnings("unchecked")
    private List<Object> decode(byte[] body) {
        return (List<Object>) worker.options().codec().decode(body, List.class);
    }
}
