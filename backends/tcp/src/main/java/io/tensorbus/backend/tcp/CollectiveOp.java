package io.tensorbus.backend.tcp;

import io.tensorbus.DType;
import io.tensorbus.c10d.ReduceOp;
import io.tensorbus.spi.DeviceBuffer;
import io.tensorbus.spi.support.HostReductions;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;

/**
 * One running collective: its sequence number, the call it was made with, and the messages its algorithm
 * exchanges. Algorithms ({@link RingAllReduce}, {@link BinomialTree}, ...) see only this: send a region to a
 * peer, receive a region (copied or reduced in place) from a peer, copy, duplicate and reduce regions locally.
 * Runs on the group's event loop.
 *
 * <p>Device regions move through host staging memory: a send first copies its range to the host, a receive
 * lands in the host and is then copied, or reduced by the device runtime's kernel, into the device buffer.
 * Each chunk of a pipelined algorithm does this on its own, so device copies, the network and the device's
 * reductions of different chunks overlap. The device's futures complete on its runtime's threads; every one is
 * brought back to the event loop before the algorithm goes on.
 */
final class CollectiveOp {
    final TcpBackend backend;
    final long sequence;
    final Call call;
    final Promise<Void> promise = Promise.promise();
    long timer = -1;
    /** Device scratch buffers of this collective, released when it ends. */
    private final List<Region> scratch = new ArrayList<>();
    /** Host scratch of this collective from the backend's {@link StagingPool}, given back when it ends. */
    private final List<MemorySegment> hostScratch = new ArrayList<>();

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

    /** The peer and tag of the message that already left on the caller's thread, or -1. */
    private int sentPeer = -1;
    private long sentTag;

    /**
     * Writes this collective's first message, {@code region} to {@code peer} as {@code tag}, into shared memory
     * on the calling thread, before the collective starts on the event loop; the algorithm's own send of it then
     * completes at once. Returns false (nothing sent) when the link cannot take it now. Caller's thread.
     */
    boolean sendFirstNow(int peer, long tag, Region region) {
        PeerConnection c = backend.connection(peer);
        if (c != null && region.isHost()
                && c.tryWriteNow(call.frame(sequence, tag, region.byteSize(), backend.groupHash()), region.segment())) {
            sentPeer = peer;
            sentTag = tag;
            return true;
        }
        return false;
    }

    /** Sends {@code region} to {@code peer} as the message {@code tag} of this collective. */
    Future<Void> send(int peer, long tag, Region region) {
        if (peer == sentPeer && tag == sentTag) {
            sentPeer = -1;
            return Future.succeededFuture();
        }
        return backend.hostBytes(region).compose(bytes -> backend.connection(peer)
                .write(call.frame(sequence, tag, bytes.byteSize(), backend.groupHash()), bytes)
                .andThen(ar -> backend.doneWith(region, bytes))
                .recover(e -> Future.failedFuture(backend.writeFailed(peer, this, e))));
    }

    /** Receives the message {@code tag} from {@code peer} into {@code region}. */
    Future<Void> recvInto(int peer, long tag, Region region) {
        if (region.isHost()) {
            return expect(peer, tag, Sink.copyInto(region.segment()));
        }
        MemorySegment staging = backend.staging().take(region.byteSize());
        return expect(peer, tag, Sink.copyInto(staging)).compose(v -> backend.upload(staging, region))
                .andThen(ar -> backend.staging().give(staging));
    }

    /** Receives the message {@code tag} from {@code peer} and combines it into {@code acc} with {@code op}. */
    Future<Void> recvReduce(int peer, long tag, Region acc, ReduceOp op, DType dtype) {
        if (acc.isHost()) {
            return expect(peer, tag, Sink.reduceInto(acc.segment(), op, dtype));
        }
        MemorySegment staging = backend.staging().take(acc.byteSize());
        return expect(peer, tag, Sink.copyInto(staging)).compose(v -> reduce(acc, Region.host(staging), op, dtype))
                .andThen(ar -> backend.staging().give(staging));
    }

    private Future<Void> expect(int peer, long tag, Sink sink) {
        return backend.router().expect(new Router.Key(peer, sequence, tag), sink).mapEmpty();
    }

    /** {@code acc = acc op src}, on the host or by the accumulator's device runtime. */
    Future<Void> reduce(Region acc, Region src, ReduceOp op, DType dtype) {
        if (acc.isHost() && src.isHost()) {
            HostReductions.reduceInto(op, dtype, acc.segment(), src.segment());
            return Future.succeededFuture();
        }
        if (acc.isHost()) {
            // A device operand into a host accumulator: fetch it, then reduce on the host.
            return backend.hostBytes(src).map(bytes -> {
                HostReductions.reduceInto(op, dtype, acc.segment(), bytes);
                backend.doneWith(src, bytes);
                return null;
            });
        }
        DeviceBuffer source = src.isHost() ? Region.asBuffer(src.segment(), dtype) : src.buffer();
        long from = src.isHost() ? 0 : src.offset();
        return backend.onLoop(acc.runtime().reduce(op, acc.buffer(), acc.offset(), source, from, acc.byteSize()));
    }

    /** Copies {@code src} into {@code dst} (the same size). */
    Future<Void> copy(Region src, Region dst) {
        if (src.isHost() && dst.isHost()) {
            dst.segment().copyFrom(src.segment());
            return Future.succeededFuture();
        }
        if (dst.isHost()) {
            return backend.hostBytes(src).map(bytes -> {
                dst.segment().copyFrom(bytes);
                backend.doneWith(src, bytes);
                return null;
            });
        }
        if (src.isHost()) {
            return backend.upload(src.segment(), dst);
        }
        return backend.onLoop(dst.runtime().copy(src.buffer(), src.offset(), dst.buffer(), dst.offset(),
                dst.byteSize()));
    }

    /** A scratch copy of {@code region}, in the same kind of memory; device scratch is freed when this op ends. */
    Future<Region> duplicate(Region region) {
        if (region.isHost()) {
            MemorySegment c = scratch(region.byteSize());
            c.copyFrom(region.segment());
            return Future.succeededFuture(Region.host(c));
        }
        DeviceBuffer b = region.runtime().allocate(region.buffer().device(), region.dtype(),
                region.byteSize() / region.dtype().byteSize());
        Region copy = Region.device(b, region.runtime(), 0, region.byteSize());
        scratch.add(copy);
        return copy(region, copy).map(copy);
    }

    /** Divides every element of {@code region} by {@code divisor}: the end of an average. */
    Future<Void> divide(Region region, DType dtype, int divisor) {
        if (region.isHost()) {
            HostReductions.divide(dtype, region.segment(), divisor);
            return Future.succeededFuture();
        }
        return backend.onLoop(region.runtime().divide(region.buffer(), region.offset(), region.byteSize(), divisor));
    }

    /**
     * Frees this op's device scratch (queued device work keeps it alive until it finished) and gives its host
     * scratch back to the pool when the algorithm {@code succeeded}: every send and receive of it has then
     * completed. After a failure a write may still be reading it, so it is left to the garbage collector.
     */
    void releaseScratch(boolean succeeded) {
        for (Region r : scratch) {
            r.runtime().release(r.buffer());
        }
        scratch.clear();
        if (succeeded) {
            hostScratch.forEach(backend.staging()::give);
        }
        hostScratch.clear();
    }

    /**
     * A temporary host buffer of {@code bytes} bytes for this collective: a heap array when small (the young
     * generation frees it at no cost), else native memory from the backend's pool, back there when it ends.
     */
    MemorySegment scratch(long bytes) {
        if (bytes <= Router.PARK_BYTES) {
            return MemorySegment.ofArray(new byte[(int) bytes]);
        }
        MemorySegment s = backend.staging().take(bytes);
        hostScratch.add(s);
        return s;
    }


    /** The message tag of step {@code step} of phase {@code phase}, chunk {@code chunk}. */
    static long tag(int phase, int step, int chunk) {
        return ((long) phase << 48) | ((long) step << 24) | chunk;
    }
}
