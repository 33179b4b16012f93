package io.tensorbus.workloads.examples;

import io.tensorbus.DType;
import io.tensorbus.c10d.ReduceOp;
import io.tensorbus.distributed.ProcessGroup;
import io.tensorbus.tensor.Generator;
import io.tensorbus.tensor.Tensor;
import io.vertx.core.Future;
import java.io.PrintStream;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;

/**
 * The tutorial's own ring all-reduce, written with point-to-point calls only, and checked against the
 * group's {@code allReduce}.
 *
 * <p>{@link #allreduce(ProcessGroup, Tensor, Tensor)} is the tutorial's {@code allreduce(send, recv)}: each
 * rank passes what it last received to its right neighbour ({@code isend}) while receiving from its left one
 * ({@code recv}), {@code size - 1} times, adding every received tensor into an accumulator. (The tutorial's
 * listing never copies {@code send} into {@code send_buff} and adds {@code recv} instead of the buffer just
 * received; this is the corrected form, the one in the tutorial's repository.) Each step moves the whole
 * tensor, so it sends {@code (size - 1) * n} elements per rank.
 *
 * <p>{@link #chunkedAllreduce(ProcessGroup, Tensor, Tensor)} is the exercise the tutorial leaves to the
 * reader, Baidu DeepSpeech's ring: the tensor is cut into {@code size} chunks ({@code torch.chunk}); a
 * reduce-scatter pass leaves each rank with one fully summed chunk, and an all-gather pass circulates those,
 * so each rank sends {@code 2 (size - 1) / size * n} elements, the bandwidth-optimal amount.
 *
 * <pre>tensorbus launch --nproc-per-node 4 io.tensorbus.workloads.examples.RingAllReduceExample</pre>
 */
public final class RingAllReduceExample {
    /** Elements of the tensor {@link #run(ProcessGroup)} reduces. */
    static final int NUMEL = 1000;

    /** What {@link #run(ProcessGroup)} computed on one rank. */
    public record Result(Tensor input, Tensor ring, Tensor chunkedRing, Tensor reference) {
        /** The largest absolute difference between either ring's result and {@code allReduce}'s. */
        public double maxError() {
            return Math.max(ring.sub(reference).abs().max().item(), chunkedRing.sub(reference).abs().max().item());
        }
    }

    private RingAllReduceExample() {
    }

    /** Joins the job through {@code env://} and runs {@link #run(ProcessGroup)}. */
    public static void main(String[] args) throws Exception {
        ExampleMain.run(RingAllReduceExample::run);
    }

    /** {@link #run(ProcessGroup, PrintStream)} printing to {@code System.out}. */
    public static Result run(ProcessGroup pg) {
        return run(pg, System.out);
    }

    /**
     * Sums a random tensor (seeded by the rank) with both rings and with {@code allReduce}, prints the first
     * element of each and the largest difference, and returns all of them.
     */
    public static Result run(ProcessGroup pg, PrintStream out) {
        Tensor send = Tensor.randn(new Generator(1000 + pg.rank()), DType.FLOAT32, NUMEL);
        Tensor ring = Tensor.zeros(NUMEL);
        allreduce(pg, send, ring);
        Tensor chunked = Tensor.zeros(NUMEL);
        chunkedAllreduce(pg, send, chunked);
        Tensor reference = send.clone();
        pg.allReduce(reference, ReduceOp.SUM).await();
        Result r = new Result(send, ring, chunked, reference);
        out.println(String.format(Locale.ROOT, "Rank %d has data %.6f (ring), %.6f (chunked ring), %.6f (allReduce);"
                + " largest difference %.3g", pg.rank(), ring.getDouble(0), chunked.getDouble(0),
                reference.getDouble(0), r.maxError()));
        return r;
    }

    /**
     * The tutorial's {@code allreduce(send, recv)}: writes the sum of every rank's {@code send} into
     * {@code recv}. Every rank of {@code pg} must call it with tensors of the same shape.
     */
    public static void allreduce(ProcessGroup pg, Tensor send, Tensor recv) {
        checkShapes(send, recv);
        int rank = pg.rank();
        int size = pg.size();
        Tensor sendBuff = send.contiguous().clone();
        Tensor recvBuff = Tensor.zerosLike(sendBuff);
        Tensor accum = sendBuff.clone();

        int left = (rank - 1 + size) % size;
        int right = (rank + 1) % size;

        for (int i = 0; i < size - 1; i++) {
            Future<Void> sendReq;
            if (i % 2 == 0) {
                // Send sendBuff, receive into recvBuff.
                sendReq = pg.isend(sendBuff, right);
                pg.recv(recvBuff, left);
                accum.addi(recvBuff);
            } else {
                // Send recvBuff, receive into sendBuff.
                sendReq = pg.isend(recvBuff, right);
                pg.recv(sendBuff, left);
                accum.addi(sendBuff);
            }
            sendReq.await();
        }
        recv.copyi(accum);
    }

    /**
     * DeepSpeech's chunked ring: writes the sum of every rank's {@code send} into {@code recv}, moving
     * {@code 2 (size - 1) / size} of the tensor per rank. Every rank of {@code pg} must call it with tensors
     * of the same shape; tensors with fewer elements than ranks go through {@link #allreduce}.
     */
    public static void chunkedAllreduce(ProcessGroup pg, Tensor send, Tensor recv) {
        checkShapes(send, recv);
        int rank = pg.rank();
        int size = pg.size();
        if (send.numel() < size) {
            allreduce(pg, send, recv);
            return;
        }
        Tensor accum = send.contiguous().clone().reshape(-1);
        List<Tensor> chunks = accum.split(chunkSizes(accum.numel(), size), 0);
        Tensor scratch = Tensor.empty(accum.dtype(), chunks.get(0).numel());
        int left = (rank - 1 + size) % size;
        int right = (rank + 1) % size;

        // Reduce-scatter: after step s, chunk (rank - s - 1) holds the sum of s + 2 ranks' parts; at the end
        // chunk (rank + 1) holds everyone's.
        for (int s = 0; s < size - 1; s++) {
            Tensor outgoing = chunks.get(Math.floorMod(rank - s, size));
            Tensor target = chunks.get(Math.floorMod(rank - s - 1, size));
            Tensor incoming = scratch.narrow(0, 0, target.numel());
            Future<Void> sendReq = pg.isend(outgoing, right);
            pg.recv(incoming, left);
            target.addi(incoming);
            sendReq.await();
        }
        // All-gather: pass the finished chunks around the ring, receiving each in place.
        for (int s = 0; s < size - 1; s++) {
            Tensor outgoing = chunks.get(Math.floorMod(rank + 1 - s, size));
            Tensor incoming = chunks.get(Math.floorMod(rank - s, size));
            Future<Void> sendReq = pg.isend(outgoing, right);
            pg.recv(incoming, left);
            sendReq.await();
        }
        recv.copyi(accum.reshape(recv.shape()));
    }

    /** An even split of {@code numel} elements into {@code parts} chunks, the first ones one element larger. */
    static int[] chunkSizes(int numel, int parts) {
        int[] sizes = new int[parts];
        for (int i = 0; i < parts; i++) {
            sizes[i] = numel / parts + (i < numel % parts ? 1 : 0);
        }
        return sizes;
    }

    private static void checkShapes(Tensor send, Tensor recv) {
        if (send.numel() != recv.numel() || send.dtype() != recv.dtype()) {
            throw new IllegalArgumentException("send and recv must agree in dtype and size, got " + send.dtype()
                    + Arrays.toString(send.shape()) + " and " + recv.dtype()
                    + Arrays.toString(recv.shape()));
        }
    }
}
