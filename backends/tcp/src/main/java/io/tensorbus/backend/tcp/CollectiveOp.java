package io.tensorbus.backend.tcp;

import io.tensorbus.DType;
import io.tensorbus.c10d.ReduceOp;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/**
 * One running collective: its sequence number, the call it was made with, and the messages its algorithm
 * exchanges. Algorithms ({@link RingAllReduce}, {@link BinomialTree}, ...) see only this: send a region to a
 * peer, receive a region (copied or reduced in place) from a peer. Runs on the group's event loop.
 */
final class CollectiveOp {
    final TcpBackend backend;
    final long sequence;
    final Call call;
    final Promise<Void> promise = Promise.promise();
    long timer = -1;

    CollectiveOp(TcpBackend backend, long sequence, Call call) {
        this.backend = backend;
        this.sequence = sequence;
        this.call = call;
    }

    int rank() {
        return backend.rank();
    }

    int size() {
        return backend.size();
    }

    /** The chunk size that pipelined algorithms cut large buffers into, in bytes. */
    long chunkBytes() {
        return backend.chunkBytes();
    }

    /** Sends {@code region} to {@code peer} as the message {@code tag} of this collective. */
    Future<Void> send(int peer, long tag, MemorySegment region) {
        return backend.connection(peer).write(call.frame(sequence, tag, region.byteSize(), backend.groupHash()), region)
                .recover(e -> Future.failedFuture(backend.writeFailed(peer, this, e)));
    }

    /** Receives the message {@code tag} from {@code peer} into {@code region}. */
    Future<Void> recvInto(int peer, long tag, MemorySegment region) {
        return backend.router().expect(new Router.Key(peer, sequence, tag), Sink.copyInto(region)).mapEmpty();
    }

    /** Receives the message {@code tag} from {@code peer} and combines it into {@code acc} with {@code op}. */
    Future<Void> recvReduce(int peer, long tag, MemorySegment acc, ReduceOp op, DType dtype) {
        return backend.router().expect(new Router.Key(peer, sequence, tag), Sink.reduceInto(acc, op, dtype)).mapEmpty();
    }

    /** A temporary buffer of {@code bytes} bytes, freed by the garbage collector after the collective. */
    static MemorySegment scratch(long bytes) {
        return bytes <= Router.PARK_BYTES ? MemorySegment.ofArray(new byte[(int) bytes])
                : Arena.ofAuto().allocate(bytes, 64);
    }

    /** A scratch copy of {@code region}. */
    static MemorySegment copyOf(MemorySegment region) {
        MemorySegment c = scratch(region.byteSize());
        c.copyFrom(region);
        return c;
    }

    /** The message tag of step {@code step} of phase {@code phase}, chunk {@code chunk}. */
    static long tag(int phase, int step, int chunk) {
        return ((long) phase << 48) | ((long) step << 24) | chunk;
    }
}
