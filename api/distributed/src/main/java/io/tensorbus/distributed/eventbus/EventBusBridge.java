package io.tensorbus.distributed.eventbus;

import io.tensorbus.c10d.JobSecret;
import io.tensorbus.distributed.rpc.RpcAgent;
import io.tensorbus.io.ObjectCodec;
import io.vertx.core.Future;
import io.vertx.core.MultiMap;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.eventbus.DeliveryOptions;
import io.vertx.core.eventbus.EventBus;
import io.vertx.core.eventbus.Message;
import io.vertx.core.eventbus.MessageConsumer;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Serves functions of an RPC worker at event-bus addresses ({@link #address}), so that any verticle of a clustered
 * Vert.x can call them, and calls them from there ({@link #call}). A message's body is the call's arguments in the
 * project's codec ({@link ObjectCodec}: tensors inline), its answer the result. The clustered event bus
 * authenticates nothing, so every request carries a proof of the job's secret: {@value #PROOF_HEADER}, hex of
 * HMAC-SHA256 under the secret of the address, the time ({@value #TIME_HEADER}, epoch milliseconds) and the body.
 * The bridge checks it, in constant time and within {@link #MAX_SKEW} of its own clock, before it decodes anything;
 * an unproven request is refused ({@link #REFUSED}, counted by {@link #refused()}). Answers are proven the same way,
 * bound to their request's proof, and {@link #call} checks them. Thread-safe.
 */
public final class EventBusBridge implements AutoCloseable {
    /** The header holding a message's proof. */
    public static final String PROOF_HEADER = "tensorbus-proof";
    /** The header holding the time its proof covers, in epoch milliseconds. */
    public static final String TIME_HEADER = "tensorbus-time";
    /** The failure code of a refused request: one that carries no valid proof. */
    public static final int REFUSED = 401;
    /** The failure code of a request whose function failed or whose arguments could not be read. */
    public static final int FAILED = 500;
    /** How far a proof's time may be from the receiver's clock. */
    public static final Duration MAX_SKEW = Duration.ofMinutes(5);
    private static final String PREFIX = "tensorbus.rpc.";
    private static final ObjectCodec CODEC = ObjectCodec.standard();

    private final List<MessageConsumer<Buffer>> consumers = new ArrayList<>();
    private final AtomicLong refused = new AtomicLong();
    private final JobSecret secret;

    private EventBusBridge(JobSecret secret) {
        this.secret = secret;
    }

    /** The address of {@code worker}'s function {@code function}. */
    public static String address(String worker, String function) {
        return PREFIX + worker + "." + function;
    }

    /**
     * Serves {@code functions}, registered on {@code agent}'s registry, at their addresses on {@code bus}: each
     * proven request runs the function on {@code agent} as a call to itself (arguments copied, on its pool).
     *
     * @throws IllegalArgumentException for no function, one the registry lacks, or a secret that is not present
     */
    public static EventBusBridge serve(RpcAgent agent, EventBus bus, JobSecret secret, String... functions) {
        Objects.requireNonNull(agent, "agent");
        Objects.requireNonNull(bus, "bus");
        checkSecret(secret);
        if (functions.length == 0) {
            throw new IllegalArgumentException("no function to serve: name one or more registered functions");
        }
        for (String f : functions) {
            if (!agent.options().registry().contains(f)) {
                throw new IllegalArgumentException("'" + f + "' is not registered on worker " + agent.self().name());
            }
        }
        EventBusBridge bridge = new EventBusBridge(secret);
        for (String f : functions) {
            String address = address(agent.self().name(), f);
            bridge.consumers.add(bus.consumer(address, m -> bridge.answer(agent, f, address, m)));
        }
        return bridge;
    }

    /** Requests refused for want of a proof so far. */
    public long refused() {
        return refused.get();
    }

    /**
     * Calls {@code worker}'s {@code function} through {@code bus} with {@code args}, proving {@code secret}; the
     * future fails with the event bus's {@code ReplyException} when the bridge refuses or the function fails, and
     * with a {@link SecurityException} when the answer is not proven.
     *
     * @throws IllegalArgumentException for arguments the codec cannot encode, or no secret
     */
    public static <T> Future<T> call(EventBus bus, JobSecret secret, String worker, String function,
                                     Object... args) {
        checkSecret(secret);
        String address = address(worker, function);
        byte[] body = CODEC.encode(new ArrayList<>(Arrays.asList(args)));
        String time = Long.toString(System.currentTimeMillis());
        String proof = proof(secret, address, time, body);
        DeliveryOptions o = new DeliveryOptions().addHeader(PROOF_HEADER, proof).addHeader(TIME_HEADER, time);
        return bus.<Buffer>request(address, Buffer.buffer(body), o).map(reply -> answerOf(secret, proof, reply));
    }

    @SuppressWarnings("unchecked")
    private static <T> T answerOf(JobSecret secret, String requestProof, Message<Buffer> reply) {
        byte[] body = reply.body() == null ? new byte[0] : reply.body().getBytes();
        if (!proven(secret, "reply:" + requestProof, reply.headers(), body)) {
            throw new SecurityException("the answer to a bridged call is not proven by the job's secret");
        }
        return (T) CODEC.decode(body);
    }

    private void answer(RpcAgent agent, String function, String address, Message<Buffer> m) {
        byte[] body = m.body() == null ? new byte[0] : m.body().getBytes();
        if (!proven(secret, address, m.headers(), body)) {
            refused.incrementAndGet();
            m.fail(REFUSED, "refused: the request carries no valid proof of the job's secret (" + PROOF_HEADER + ")");
            return;
        }
        Object[] args;
        try {
            args = ((List<?>) CODEC.decode(body, List.class)).toArray();
        } catch (RuntimeException e) {
            m.fail(FAILED, "cannot read the arguments of '" + function + "': " + e.getMessage());
            return;
        }
        agent.<Object>rpcAsync(agent.self(), agent.options().timeout(), function, args).onComplete(r -> {
            if (r.failed()) {
                m.fail(FAILED, "'" + function + "' failed on " + agent.self().name() + ": " + r.cause().getMessage());
                return;
            }
            byte[] out;
            try {
                out = CODEC.encode(r.result());
            } catch (RuntimeException e) {
                m.fail(FAILED, "cannot send the result of '" + function + "': " + e.getMessage());
                return;
            }
            String time = Long.toString(System.currentTimeMillis());
            String requestProof = m.headers().get(PROOF_HEADER);
            m.reply(Buffer.buffer(out), new DeliveryOptions().addHeader(TIME_HEADER, time)
                    .addHeader(PROOF_HEADER, proof(secret, "reply:" + requestProof, time, out)));
        });
    }

    /** True when {@code headers} prove {@code body} sent to {@code address} within {@link #MAX_SKEW} of now. */
    private static boolean proven(JobSecret secret, String address, MultiMap headers, byte[] body) {
        String proof = headers.get(PROOF_HEADER);
        String time = headers.get(TIME_HEADER);
        if (proof == null || time == null) {
            return false;
        }
        long at;
        try {
            at = Long.parseLong(time);
        } catch (NumberFormatException e) {
            return false;
        }
        if (Math.abs(System.currentTimeMillis() - at) > MAX_SKEW.toMillis()) {
            return false;
        }
        return MessageDigest.isEqual(proof.getBytes(StandardCharsets.US_ASCII),
                proof(secret, address, time, body).getBytes(StandardCharsets.US_ASCII));
    }

    private static String proof(JobSecret secret, String address, String time, byte[] body) {
        return HexFormat.of().formatHex(secret.mac("tensorbus-eventbus-v1".getBytes(StandardCharsets.US_ASCII),
                address.getBytes(StandardCharsets.UTF_8), time.getBytes(StandardCharsets.US_ASCII), body));
    }

    private static void checkSecret(JobSecret secret) {
        if (secret == null || !secret.isPresent()) {
            throw new IllegalArgumentException("the event-bus bridge needs the job's secret (TENSORBUS_SECRET): the"
                    + " clustered event bus authenticates nothing, so every message must prove it");
        }
    }

    /** Stops serving: the addresses are unregistered. */
    public Future<Void> closeAsync() {
        return Future.all(consumers.stream().map(MessageConsumer::unregister).toList()).mapEmpty();
    }

    /** {@link #closeAsync()}, not waiting. */
    @Override
    public void close() {
        closeAsync();
    }
}
