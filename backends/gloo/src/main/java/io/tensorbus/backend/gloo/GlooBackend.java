package io.tensorbus.backend.gloo;

import io.tensorbus.c10d.CommunicationException;
import io.tensorbus.c10d.CommunicationTimeoutException;
import io.tensorbus.c10d.ReduceOp;
import io.tensorbus.spi.Backend;
import io.tensorbus.spi.BackendOptions;
import io.tensorbus.spi.DeviceBuffer;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongFunction;
import java.util.function.Supplier;
import java.util.stream.IntStream;

/**
 * The {@code gloo} backend: PyTorch's ProcessGroupGloo on the wire. Every collective takes the next value of the
 * group's collective counter as its tag, as ProcessGroupGloo's {@code nextTag()} does, and runs gloo's algorithm
 * for it; point-to-point messages travel on the user's tag. A timeout, a lost peer or a mismatched collective
 * breaks the group, as it leaves gloo's pairs out of step; later operations fail with that cause.
 */
final class GlooBackend implements Backend {
    private final GlooContext context;
    private final Vertx vertx;
    private final Duration timeout;
    private final AtomicLong collectives = new AtomicLong();
    private final int[] everyPeer;

    GlooBackend(GlooContext context, BackendOptions options) {
        this.context = context;
        this.vertx = options.vertx();
        this.timeout = options.timeout();
        this.everyPeer = IntStream.range(0, context.size()).filter(r -> r != context.rank())
                .toArray();
    }

    /** The transport context, for tests that watch a pair's state. */
    GlooContext context() {
        return context;
    }

    @Override
    public String name() {
        return GlooBackendProvider.NAME;
    }

    @Override
    public int rank() {
        return context.rank();
    }

    @Override
    public int size() {
        return context.size();
    }

    @Override
    public Future<Void> send(DeviceBuffer buffer, int dst, int tag) {
        MemorySegment bytes = buffer.segment();
        return onLoop("send to rank " + dst + " with tag " + tag, -1, () -> context.send(dst, tag, bytes));
    }

    @Override
    public Future<Integer> recv(DeviceBuffer buffer, int src, int tag) {
        MemorySegment into = buffer.segment();
        if (src == ANY_SOURCE) {
            return onLoop("recv from any rank with tag " + tag, -1, () -> context.recvFromAny(everyPeer, tag, into));
        }
        return onLoop("recv from rank " + src + " with tag " + tag, -1,
                () -> context.recv(src, tag, into).map(v -> src));
    }

    @Override
    public Future<Void> broadcast(DeviceBuffer buffer, int root) {
        return collective(Slot.BROADCAST, slot -> BinomialBroadcast.run(context, buffer.segment(), root, slot));
    }

    @Override
    public Future<Void> allReduce(DeviceBuffer buffer, ReduceOp op) {
        Future<Void> refused = refuse(op);
        return refused != null ? refused : collective(Slot.ALLREDUCE,
                slot -> RingAllReduce.run(context, buffer.segment(), buffer.dtype(), op, slot));
    }

    @Override
    public Future<Void> reduce(DeviceBuffer buffer, int root, ReduceOp op) {
        Future<Void> refused = refuse(op);
        return refused != null ? refused : collective(Slot.REDUCE,
                slot -> RingReduce.run(context, buffer.segment(), buffer.dtype(), op, root, slot));
    }

    @Override
    public Future<Void> allGather(List<DeviceBuffer> outputs, DeviceBuffer input) {
        long block = input.byteSize();
        return collective(Slot.ALLGATHER, slot -> {
            MemorySegment flat = MemorySegment.ofArray(new byte[Math.toIntExact(block * context.size())]);
            MemorySegment.copy(input.segment(), 0, flat, context.rank() * block, block);
            return RingAllGather.run(context, flat, slot).map(v -> {
                unflatten(flat, outputs, block);
                return null;
            });
        });
    }

    @Override
    public Future<Void> gather(List<DeviceBuffer> outputs, DeviceBuffer input, int root) {
        long block = input.byteSize();
        boolean isRoot = context.rank() == root;
        return collective(Slot.GATHER, slot -> {
            MemorySegment flat = isRoot ? MemorySegment.ofArray(new byte[Math.toIntExact(block * context.size())])
                    : MemorySegment.NULL;
            return RootGather.gather(context, flat, input.segment(), root, slot).map(v -> {
                if (isRoot) {
                    unflatten(flat, outputs, block);
                }
                return null;
            });
        });
    }

    @Override
    public Future<Void> scatter(DeviceBuffer output, List<DeviceBuffer> inputs, int root) {
        MemorySegment[] parts = inputs.stream().map(DeviceBuffer::segment).toArray(MemorySegment[]::new);
        return collective(Slot.SCATTER, slot -> RootGather.scatter(context, output.segment(), parts, root, slot));
    }

    @Override
    public Future<Void> reduceScatter(DeviceBuffer output, List<DeviceBuffer> inputs, ReduceOp op) {
        return Future.failedFuture(new UnsupportedOperationException("the gloo backend has no reduceScatter, as"
                + " PyTorch 1.13's ProcessGroupGloo has none; use the tcp backend for it"));
    }

    @Override
    public Future<Void> allToAll(List<DeviceBuffer> outputs, List<DeviceBuffer> inputs) {
        MemorySegment[] outs = outputs.stream().map(DeviceBuffer::segment).toArray(MemorySegment[]::new);
        MemorySegment[] ins = inputs.stream().map(DeviceBuffer::segment).toArray(MemorySegment[]::new);
        return collective(Slot.ALLTOALL, slot -> AllToAll.run(context, outs, ins, slot));
    }

    @Override
    public Future<Void> barrier() {
        return collective(Slot.BARRIER, slot -> DisseminationBarrier.run(context, slot));
    }

    @Override
    public Future<Void> close() {
        Promise<Void> closed = Promise.promise();
        context.loop().runOnContext(v -> {
            context.breakWith(new CommunicationException(context.group(), -1, "gloo group '" + context.group()
                    + "' was closed on rank " + context.rank(), null));
            closed.complete();
        });
        return closed.future();
    }

    /** gloo reduces with SUM, PRODUCT, MIN, MAX and the bitwise ops; ProcessGroupGloo refuses AVG and PREMUL_SUM. */
    private static Future<Void> refuse(ReduceOp op) {
        ReduceOp.Type t = op.type();
        if (t == ReduceOp.Type.AVG || t == ReduceOp.Type.PREMUL_SUM) {
            return Future.failedFuture(new UnsupportedOperationException("the gloo backend cannot reduce with " + op
                    + ", as PyTorch's ProcessGroupGloo cannot; reduce with SUM and divide"));
        }
        return null;
    }

    private static void unflatten(MemorySegment flat, List<DeviceBuffer> outputs, long block) {
        for (int r = 0; r < outputs.size(); r++) {
            MemorySegment.copy(flat, r * block, outputs.get(r).segment(), 0, block);
        }
    }

    /** Runs a collective under the group's next counter value, on the event loop, within the group's timeout. */
    private Future<Void> collective(int prefix, LongFunction<Future<Void>> body) {
        long tag = collectives.getAndIncrement() & 0xffffffffL;
        long slot = Slot.build(prefix, tag);
        String what = Slot.name(prefix) + " #" + tag;
        return onLoop(what, tag, () -> {
            Promise<Void> done = Promise.promise();
            context.begin(tag, prefix, done).compose(v -> body.apply(slot)).onComplete(ar -> {
                if (ar.failed()) {
                    context.breakWith(ar.cause());
                    done.tryFail(ar.cause());
                } else {
                    done.tryComplete();
                }
            });
            return done.future();
        });
    }

    /** Starts {@code op} on the event loop; breaks the group when it has not completed within the timeout. */
    private <T> Future<T> onLoop(String what, long sequence, Supplier<Future<T>> op) {
        Promise<T> result = Promise.promise();
        context.loop().runOnContext(v -> {
            Future<T> started;
            try {
                started = op.get();
            } catch (RuntimeException e) {
                result.fail(e);
                return;
            }
            if (started.isComplete()) {
                result.handle(started);
                return;
            }
            long timer = vertx.setTimer(timeout.toMillis(), id -> context.breakWith(new CommunicationTimeoutException(
                    context.group(), sequence, "gloo group '" + context.group() + "': " + what + " on rank "
                    + context.rank() + " did not complete within " + timeout.toMillis() + " ms; outstanding: "
                    + context.outstanding(), new int[0])));
            started.onComplete(ar -> {
                vertx.cancelTimer(timer);
                result.handle(ar);
            });
        });
        return result.future();
    }
}
