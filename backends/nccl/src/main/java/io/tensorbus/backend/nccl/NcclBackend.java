package io.tensorbus.backend.nccl;

import io.tensorbus.DType;
import io.tensorbus.c10d.CommunicationException;
import io.tensorbus.c10d.CommunicationTimeoutException;
import io.tensorbus.c10d.ReduceOp;
import io.tensorbus.spi.Backend;
import io.tensorbus.spi.BackendOptions;
import io.tensorbus.spi.DeviceBuffer;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The nccl backend of one group: an NCCL communicator, the CUDA stream its work runs on, one thread that issues
 * the NCCL calls in the order the caller made them (NCCL needs the same order on every rank, and some calls
 * block), and an {@link NcclWatchdog} that completes the futures from CUDA events and, on a timeout or an
 * asynchronous NCCL error, aborts the communicator ({@code ncclCommAbort}) and fails every pending operation
 * naming this rank, the operation and the cause. Nothing waits on the caller's thread or an event loop.
 *
 * <p>Collectives that take one buffer per rank (all-gather, gather, scatter, reduce-scatter, all-to-all) are
 * grouped NCCL calls ({@code ncclGroupStart}/{@code ncclGroupEnd}): broadcasts, reduces or send/recv pairs, one
 * per rank, launched together.
 */
final class NcclBackend implements Backend {
    private final BackendOptions options;
    private final Nccl nccl;
    private final long comm;
    private final CudaStream stream;
    private final DeviceBuffer barrierBuffer;
    private final ExecutorService issuer;
    private final NcclWatchdog watchdog;
    /** The sequence number of the next collective, from 1 as the flight recorder numbers them. */
    private final AtomicLong collectives = new AtomicLong(1);
    private volatile CommunicationException broken;
    private volatile boolean closed;
    /** The tcp group that checks collectives and watches peers, or null without one. */
    private volatile NcclShadow shadow;

    /**
     * @param barrierBuffer a one-element float32 CUDA buffer that {@link #barrier()} all-reduces
     */
    NcclBackend(BackendOptions options, Nccl nccl, long comm, CudaStream stream, DeviceBuffer barrierBuffer) {
        this.options = options;
        this.nccl = nccl;
        this.comm = comm;
        this.stream = stream;
        this.barrierBuffer = barrierBuffer;
        String name = options.groupName() + "-rank" + options.rank();
        this.issuer = Executors.newSingleThreadExecutor(Thread.ofPlatform().daemon()
                .name("tensorbus-nccl-issue-" + name).factory());
        issuer.execute(stream::makeCurrent);
        this.watchdog = new NcclWatchdog(name, nccl, comm, stream, options.timeout(), this::abort);
        watchdog.start();
    }

    /** Checks every later collective and watches the peers through {@code checks} ({@link NcclShadow}). */
    void useShadow(NcclShadow checks) {
        this.shadow = checks;
    }

    @Override
    public String name() {
        return NcclBackendProvider.NAME;
    }

    @Override
    public int rank() {
        return options.rank();
    }

    @Override
    public int size() {
        return options.worldSize();
    }

    // ---- point-to-point -----------------------------------------------------------------------------------

    @Override
    public Future<Void> send(DeviceBuffer buffer, int dst, int tag) {
        return enqueue("send(" + buffer + ") to rank " + dst, null,
                () -> nccl.send(address(buffer), buffer.numel(), dtype(buffer), dst, comm, stream.handle()));
    }

    @Override
    public Future<Integer> recv(DeviceBuffer buffer, int src, int tag) {
        if (src == ANY_SOURCE) {
            return Future.failedFuture(new IllegalArgumentException("recv from any rank is not supported by the nccl "
                    + "backend (NCCL receives from a named peer); name the source rank"));
        }
        return enqueue("recv(" + buffer + ") from rank " + src, null,
                () -> nccl.recv(address(buffer), buffer.numel(), dtype(buffer), src, comm, stream.handle()))
                .map(src);
    }

    // ---- collectives ----------------------------------------------------------------------------------------

    @Override
    public Future<Void> broadcast(DeviceBuffer buffer, int root) {
        return enqueue("broadcast(" + buffer + ", root=" + root + ")", fingerprint("broadcast", buffer, root, null),
                () -> {
            long p = address(buffer);
            nccl.broadcast(p, p, buffer.numel(), dtype(buffer), root, comm, stream.handle());
        });
    }

    @Override
    public Future<Void> allReduce(DeviceBuffer buffer, ReduceOp op) {
        return enqueue("allReduce(" + buffer + ", " + op + ")", fingerprint("allReduce", buffer, -1, op), () -> {
            long p = address(buffer);
            nccl.allReduce(p, p, buffer.numel(), dtype(buffer), NcclConstants.redOp(op, buffer.dtype()), comm,
                    stream.handle());
        });
    }

    @Override
    public Future<Void> reduce(DeviceBuffer buffer, int root, ReduceOp op) {
        return enqueue("reduce(" + buffer + ", " + op + ", root=" + root + ")", fingerprint("reduce", buffer, root, op),
                () -> {
            long p = address(buffer);
            nccl.reduce(p, p, buffer.numel(), dtype(buffer), NcclConstants.redOp(op, buffer.dtype()), root, comm,
                    stream.handle());
        });
    }

    @Override
    public Future<Void> allGather(List<DeviceBuffer> outputs, DeviceBuffer input) {
        return enqueue("allGather(" + input + ")", fingerprint("allGather", input, -1, null), () -> grouped(() -> {
            long in = address(input);
            for (int r = 0; r < size(); r++) {
                // Rank r's input reaches every rank's outputs[r]: one broadcast per rank, launched together.
                nccl.broadcast(r == rank() ? in : 0, address(outputs.get(r)), input.numel(), dtype(input), r, comm,
                        stream.handle());
            }
        }));
    }

    @Override
    public Future<Void> gather(List<DeviceBuffer> outputs, DeviceBuffer input, int root) {
        return enqueue("gather(" + input + ", root=" + root + ")", fingerprint("gather", input, root, null),
                () -> grouped(() -> {
            nccl.send(address(input), input.numel(), dtype(input), root, comm, stream.handle());
            if (rank() == root) {
                for (int r = 0; r < size(); r++) {
                    nccl.recv(address(outputs.get(r)), input.numel(), dtype(input), r, comm, stream.handle());
                }
            }
        }));
    }

    @Override
    public Future<Void> scatter(DeviceBuffer output, List<DeviceBuffer> inputs, int root) {
        return enqueue("scatter(" + output + ", root=" + root + ")", fingerprint("scatter", output, root, null),
                () -> grouped(() -> {
            if (rank() == root) {
                for (int r = 0; r < size(); r++) {
                    nccl.send(address(inputs.get(r)), output.numel(), dtype(output), r, comm, stream.handle());
                }
            }
            nccl.recv(address(output), output.numel(), dtype(output), root, comm, stream.handle());
        }));
    }

    @Override
    public Future<Void> reduceScatter(DeviceBuffer output, List<DeviceBuffer> inputs, ReduceOp op) {
        return enqueue("reduceScatter(" + output + ", " + op + ")", fingerprint("reduceScatter", output, -1, op),
                () -> grouped(() -> {
            int redOp = NcclConstants.redOp(op, output.dtype());
            for (int r = 0; r < size(); r++) {
                // Block r of every rank is reduced onto rank r's output.
                nccl.reduce(address(inputs.get(r)), r == rank() ? address(output) : 0, output.numel(),
                        dtype(output), redOp, r, comm, stream.handle());
            }
        }));
    }

    @Override
    public Future<Void> allToAll(List<DeviceBuffer> outputs, List<DeviceBuffer> inputs) {
        return enqueue("allToAll", fingerprint("allToAll", null, -1, null), () -> grouped(() -> {
            for (int r = 0; r < size(); r++) {
                DeviceBuffer in = inputs.get(r);
                DeviceBuffer out = outputs.get(r);
                nccl.send(address(in), in.numel(), dtype(in), r, comm, stream.handle());
                nccl.recv(address(out), out.numel(), dtype(out), r, comm, stream.handle());
            }
        }));
    }

    /** NCCL moves CUDA memory only. */
    @Override
    public boolean acceptsHostMemory() {
        return false;
    }

    @Override
    public Future<Void> barrier() {
        // As PyTorch's NCCL barrier: an all-reduce of one element, which no rank finishes before all started it.
        return enqueue("barrier", fingerprint("barrier", null, -1, null), () -> {
            long p = address(barrierBuffer);
            nccl.allReduce(p, p, 1, NcclConstants.FLOAT32, NcclConstants.SUM, comm, stream.handle());
        });
    }

    /**
     * Closes the group: the communicator is destroyed once the work already issued was (or aborted when the group
     * failed or work is still pending), and pending operations fail.
     */
    @Override
    public Future<Void> close() {
        Promise<Void> done = Promise.promise();
        if (closed) {
            return Future.succeededFuture();
        }
        closed = true;
        NcclShadow checks = shadow;
        Future<Void> checksClosed = checks == null ? Future.succeededFuture() : checks.close();
        try {
            issuer.execute(() -> {
                NcclWork[] pending = watchdog.drain();
                watchdog.stop();
                try {
                    if (broken == null) {
                        if (pending.length == 0) {
                            nccl.commDestroy(comm);
                        } else {
                            nccl.commAbort(comm);
                        }
                    }
                } catch (RuntimeException e) {
                    System.getLogger(NcclBackend.class.getName()).log(System.Logger.Level.WARNING,
                            "closing NCCL communicator of group '" + options.groupName() + "' failed: " + e);
                }
                for (NcclWork w : pending) {
                    w.promise().tryFail(new CommunicationException(options.groupName(), w.sequence(), w.description()
                            + " did not finish: the group was closed on rank " + rank(), null));
                }
                done.complete();
            });
        } catch (RejectedExecutionException e) {
            done.complete();
        }
        issuer.shutdown();
        return Future.join(done.future(), checksClosed).mapEmpty();
    }

    // ---- machinery ------------------------------------------------------------------------------------------

    /** Something that makes NCCL calls on the issuing thread. */
    private interface Calls {
        void run();
    }

    /** Runs {@code calls} between {@code ncclGroupStart} and {@code ncclGroupEnd}. */
    private void grouped(Calls calls) {
        nccl.groupStart();
        try {
            calls.run();
        } finally {
            nccl.groupEnd();
        }
    }

    private static NcclShadow.Fingerprint fingerprint(String op, DeviceBuffer buffer, int root, ReduceOp reduceOp) {
        return NcclShadow.Fingerprint.of(op, buffer, root, reduceOp);
    }

    /** Enqueues an operation: a collective when {@code fingerprint} is given, point-to-point when it is null. */
    private Future<Void> enqueue(String what, NcclShadow.Fingerprint fingerprint, Calls calls) {
        Promise<Void> promise = Promise.promise();
        // Numbering, checking and issuing happen in one order on every rank: the order of the calls.
        synchronized (issuer) {
            long sequence = fingerprint != null ? collectives.getAndIncrement() : -1;
            String description = what + (fingerprint != null ? " #" + sequence : "") + " in group '"
                    + options.groupName() + "'";
            if (failIfUnusable(promise, description, sequence)) {
                return promise.future();
            }
            NcclShadow checks = shadow;
            if (checks != null && fingerprint != null) {
                checks.check(fingerprint, sequence, options.groupName());
            }
            try {
                issuer.execute(() -> issue(description, sequence, calls, promise));
            } catch (RejectedExecutionException e) {
                failIfUnusable(promise, description, sequence);
            }
        }
        return promise.future();
    }

    private void issue(String description, long sequence, Calls calls, Promise<Void> promise) {
        if (failIfUnusable(promise, description, sequence)) {
            return;
        }
        try {
            calls.run();
        } catch (IllegalArgumentException e) {
            promise.tryFail(new IllegalArgumentException(description + ": " + e.getMessage(), e));
            return;
        } catch (NcclException e) {
            abort(new NcclWatchdog.Failure(null, e.result(), e.getMessage()));
            promise.tryFail(failure(description, sequence, e.result(), e.getMessage()));
            return;
        }
        watchdog.watch(new NcclWork(description, sequence, System.nanoTime(), stream.recordEvent(), promise));
    }

    /** The watchdog's verdict: abort the communicator once, and fail everything pending with the cause. */
    private void abort(NcclWatchdog.Failure f) {
        String cause = f.timedOut() ? f.message() + " (a peer may have died, stalled or called another collective)"
                : "NCCL reported " + NcclConstants.resultName(f.result()) + ": " + f.message();
        NcclWork oldest = f.oldest();
        abort(failure(oldest == null ? "the group" : oldest.description(), oldest == null ? -1 : oldest.sequence(),
                f.result(), cause));
    }

    /**
     * Breaks the group with {@code cause} (the watchdog's, or the checks': a mismatch or a lost peer): aborts the
     * communicator once and fails every pending operation with an exception of the same kind naming it.
     */
    synchronized void abort(CommunicationException cause) {
        // After close the communicator is destroyed (or being destroyed): it must not be touched again.
        if (broken != null || closed) {
            return;
        }
        broken = cause;
        watchdog.stop();
        try {
            nccl.commAbort(comm);
        } catch (RuntimeException e) {
            System.getLogger(NcclBackend.class.getName()).log(System.Logger.Level.WARNING,
                    "ncclCommAbort of group '" + options.groupName() + "' failed: " + e);
        }
        for (NcclWork w : watchdog.drain()) {
            w.promise().tryFail(cause.forOperation(options.groupName(), w.sequence(), w.description()
                    + " failed on rank " + rank() + ": " + cause.getMessage()));
        }
    }

    private CommunicationException failure(String description, long sequence, int result, String cause) {
        String message = description + " failed on rank " + rank() + ": " + cause;
        return result < 0 ? new CommunicationTimeoutException(options.groupName(), sequence, message, new int[0])
                : new CommunicationException(options.groupName(), sequence, message, null);
    }

    private boolean failIfUnusable(Promise<?> promise, String description, long sequence) {
        CommunicationException b = broken;
        if (b != null) {
            promise.tryFail(b.forOperation(options.groupName(), sequence, description + " cannot run on rank "
                    + rank() + ": " + b.getMessage()));
            return true;
        }
        if (closed) {
            promise.tryFail(new CommunicationException(options.groupName(), sequence, description + " cannot run: the "
                    + "group was closed on rank " + rank(), null));
            return true;
        }
        return false;
    }

    private long address(DeviceBuffer buffer) {
        return stream.address(buffer);
    }

    private static int dtype(DeviceBuffer buffer) {
        DType d = buffer.dtype();
        return NcclConstants.dataType(d);
    }

    @Override
    public String toString() {
        return "nccl rank " + rank() + " of " + size() + " in group '" + options.groupName() + "' "
                + Arrays.toString(options.globalRanks());
    }
}
