package io.tensorbus.distributed.rpc;

import io.tensorbus.distributed.rpc.impl.RpcFrame;
import io.tensorbus.distributed.rpc.impl.RpcFrameParser;
import io.tensorbus.distributed.rpc.impl.RpcHandshake;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.net.NetClient;
import io.vertx.core.net.NetSocket;
import java.util.List;

/**
 * This worker's connection to one callee: it answers the callee's challenge with the proof of the shared
 * secret, then carries this worker's calls and their answers.
 */
final class RpcOutgoing {
    private final RpcAgent agent;
    private final NetSocket socket;
    private final WorkerInfo target;
    private final Promise<RpcOutgoing> ready = Promise.promise();

    private RpcOutgoing(RpcAgent agent, NetSocket socket, WorkerInfo target) {
        this.agent = agent;
        this.socket = socket;
        this.target = target;
    }

    /** Connects to {@code target} and completes once it has accepted this worker's proof. */
    static Future<RpcOutgoing> connect(RpcAgent agent, NetClient client, WorkerInfo target) {
        RpcWorkerTable.Address a = agent.table().address(target);
        return client.connect(a.port(), a.host())
                .recover(e -> Future.failedFuture(new RpcException("cannot connect to worker " + target + " at "
                        + a.host() + ":" + a.port() + ": " + e.getMessage(), e)))
                .compose(s -> new RpcOutgoing(agent, s, target).start());
    }

    private Future<RpcOutgoing> start() {
        socket.handler(new RpcFrameParser(agent.options().maxMessageBytes(), this::frame,
                why -> broken("sent a malformed frame: " + why)));
        socket.closeHandler(v -> broken("closed the connection"));
        socket.exceptionHandler(e -> broken("failed: " + e.getMessage()));
        long deadline = agent.vertx().setTimer(agent.options().timeout().toMillis(),
                t -> broken("did not complete the handshake within " + agent.options().timeout()));
        send(RpcFrame.OPEN, 0, new byte[0]);
        return ready.future().onComplete(r -> agent.vertx().cancelTimer(deadline));
    }

    void send(int kind, long id, byte[] body) {
        socket.write(RpcFrame.encode(kind, id, body));
    }

    void close() {
        socket.close();
    }

    private void frame(RpcFrame.Header h, Buffer body) {
        try {
            switch (h.kind()) {
                case RpcFrame.CHALLENGE -> answer(body);
                case RpcFrame.WELCOME -> ready.tryComplete(this);
                case RpcFrame.REFUSED -> refused(body);
                case RpcFrame.RETURN -> agent.complete(h.id(), decode(body).get(0));
                case RpcFrame.RAISE -> raised(h.id(), decode(body));
                default -> broken("sent a frame of kind " + h.kind() + ", which a callee never sends");
            }
        } catch (RuntimeException e) {
            broken("sent a message that does not decode: " + e.getMessage());
        }
    }

    private void answer(Buffer body) {
        List<Object> m = decode(body);
        String acceptor = (String) m.get(0);
        if (!acceptor.equals(target.name())) {
            broken("answered as '" + acceptor + "'");
            return;
        }
        byte[] proof = RpcHandshake.proof(agent.options().secret(), (byte[]) m.get(1), agent.self().name(), acceptor);
        send(RpcFrame.HELLO, 0, agent.options().codec().encode(List.of(agent.self().name(), agent.self().id(),
                proof)));
    }

    private void refused(Buffer body) {
        String why = (String) decode(body).get(0);
        ready.tryFail(new RpcException("worker " + target + " refused the connection from " + agent.self() + ": "
                + why));
        socket.close();
    }

    private void raised(long id, List<Object> m) {
        RpcAgent.RpcCall call = agent.call(id);
        String function = call == null ? "?" : call.function();
        agent.fail(id, new RemoteException(target.name(), function, (String) m.get(0), (String) m.get(1),
                (String) m.get(2)));
    }

    private void broken(String why) {
        ready.tryFail(new RpcException("worker " + target + " " + why));
        agent.lost(target, why);
        socket.close();
    }

    @SuppressWarnings("unchecked")
    private List<Object> decode(Buffer body) {
        return (List<Object>) agent.options().codec().decode(body.getBytes(), List.class);
    }
}
