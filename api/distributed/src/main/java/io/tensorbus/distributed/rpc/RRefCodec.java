package io.tensorbus.distributed.rpc;

import io.tensorbus.io.ObjectCodec;
import java.util.ArrayList;
import java.util.List;

/**
 * How {@link RRef}s, {@link WorkerInfo}s and the RRef ids travel in RPC messages. An RRef is written as
 * {@code [owner rank, RRefId, ForkId, sender rank]} with a new fork for the receiver; this needs the agent and the
 * receiver, which the codec's adapter cannot be given, so {@link RpcPayload} opens a scope on the encoding
 * or decoding thread. Outside such a scope (an object collective, say) an RRef cannot be encoded.
 */
final class RRefCodec {
    private static final ThreadLocal<Scope> SCOPE = new ThreadLocal<>();

    private RRefCodec() {
    }

    /** Registers the RPC types with {@code codec} (again is harmless). */
    @SuppressWarnings({"unchecked", "rawtypes"})
    static void register(ObjectCodec codec) {
        codec.register("tensorbus.WorkerInfo", WorkerInfo.class)
                .register("tensorbus.RRefId", RRefId.class)
                .register("tensorbus.ForkId", ForkId.class)
                .register("tensorbus.TensorSlot", RpcPayload.TensorSlot.class)
                .register("tensorbus.RRef", (Class) RRef.class, r -> toPortable((RRef<?>) r), RRefCodec::fromPortable);
    }

    /** Encoding or decoding one RPC message of {@code context}'s agent; close it on the same thread. */
    static Scope open(RRefContext context) {
        Scope s = new Scope(context, SCOPE.get());
        SCOPE.set(s);
        return s;
    }

    /** The RRefs forked while a message was encoded. */
    static final class Scope implements AutoCloseable {
        private final RRefContext context;
        private final Scope outer;
        private final List<RRefHandle.Child> forks = new ArrayList<>();

        private Scope(RRefContext context, Scope outer) {
            this.context = context;
            this.outer = outer;
        }

        /** The message was encoded: the forks made in it, for the sender to commit or abort. */
        List<RRefHandle.Child> take() {
            List<RRefHandle.Child> made = List.copyOf(forks);
            forks.clear();
            return made;
        }

        @Override
        public void close() {
            context.abort(forks);
            forks.clear();
            if (outer == null) {
                SCOPE.remove();
            } else {
                SCOPE.set(outer);
            }
        }
    }

    private static Object toPortable(RRef<?> r) {
        Scope s = SCOPE.get();
        if (s == null) {
            throw new IllegalArgumentException("an RRef can only travel in the arguments or result of an RPC call");
        }
        return s.context.fork(r.handle(), s.forks);
    }

    private static RRef<?> fromPortable(Object portable) {
        Scope s = SCOPE.get();
        if (s == null) {
            throw new IllegalArgumentException("an RRef can only be decoded by an RPC agent");
        }
        if (!(portable instanceof List<?> l) || l.size() != 4 || !(l.get(0) instanceof Integer owner)
                || !(l.get(1) instanceof RRefId id) || !(l.get(2) instanceof ForkId fork)
                || !(l.get(3) instanceof Integer sender)) {
            throw new IllegalArgumentException("an RRef must be [owner rank, RRefId, ForkId, sender rank], got "
                    + portable);
        }
        return s.context.arrived(owner, id, fork, sender);
    }
}
