package io.tensorbus.backend.nccl;

import io.tensorbus.spi.BackendOptions;
import io.tensorbus.spi.DeviceBuffer;
import io.vertx.core.Future;
import io.vertx.core.Promise;

/**
 * How the ranks of a group make their NCCL communicator: rank 0 asks NCCL for a unique id and publishes its 128
 * bytes in the c10d store (already scoped to the group), the others read it, and every rank joins with
 * {@code ncclCommInitRank} on a worker thread (it blocks until all ranks joined). A rank that never joins fails
 * the others after the group's timeout instead of leaving them waiting. The ranks then connect the tcp group that
 * checks their collectives and watches their peers ({@link NcclShadow}).
 */
final class NcclRendezvous {
    /** The store key of the unique id. */
    static final String UNIQUE_ID_KEY = "nccl/uniqueId";

    private NcclRendezvous() {
    }

    /** The backend of {@code options}' rank once every rank joined the communicator. */
    static Future<NcclBackend> connect(BackendOptions options, Nccl nccl, CudaStream stream, DeviceBuffer barrier) {
        Future<byte[]> id = options.rank() == 0
                ? options.vertx().executeBlocking(nccl::uniqueId)
                        .compose(bytes -> options.store().set(UNIQUE_ID_KEY, bytes).map(bytes))
                : options.store().get(UNIQUE_ID_KEY);
        return id.compose(bytes -> initRank(options, nccl, stream, bytes))
                .map(comm -> new NcclBackend(options, nccl, comm, stream, barrier))
                .compose(backend -> NcclShadow.open(options, backend::abort).map(checks -> {
                    backend.useShadow(checks);
                    return backend;
                }));
    }

    private static Future<Long> initRank(BackendOptions options, Nccl nccl, CudaStream stream, byte[] id) {
        if (id.length != NcclConstants.UNIQUE_ID_BYTES) {
            return Future.failedFuture(new IllegalStateException("the store holds an NCCL unique id of " + id.length
                    + " bytes under '" + UNIQUE_ID_KEY + "', not " + NcclConstants.UNIQUE_ID_BYTES));
        }
        Promise<Long> joined = Promise.promise();
        long timer = options.vertx().setTimer(options.timeout().toMillis(),
                t -> joined.tryFail(new IllegalStateException(
                "ncclCommInitRank of rank " + options.rank() + " of " + options.worldSize() + " in group '"
                        + options.groupName() + "' did not return within " + options.timeout()
                        + ": a rank did not join")));
        options.vertx().executeBlocking(() -> {
                    stream.makeCurrent();
                    return nccl.commInitRank(options.worldSize(), id, options.rank());
                }, false)
                .onComplete(ar -> {
                    options.vertx().cancelTimer(timer);
                    if (!joined.tryComplete(ar.result()) && ar.succeeded()) {
                        // Too late: the caller was told it failed; the communicator must not leak.
                        nccl.commAbort(ar.result());
                    }
                    if (ar.failed()) {
                        joined.tryFail(ar.cause());
                    }
                });
        return joined.future();
    }
}
