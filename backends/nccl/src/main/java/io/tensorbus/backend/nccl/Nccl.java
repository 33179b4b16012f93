package io.tensorbus.backend.nccl;

/**
 * The calls of NCCL's C API the backend makes ({@code nccl.h}), with handles and device pointers as addresses.
 * {@link NcclLibrary} binds them to {@code libnccl.so.2}; tests use a double. Every call that NCCL reports as
 * failed throws an {@link NcclException} naming the call, the result code and NCCL's last error. Collectives and
 * point-to-point calls only enqueue work on {@code stream}; they return before it ran.
 */
interface Nccl {

    /** {@code ncclGetVersion}: for example 22304 for 2.23.4. */
    int version();

    /** {@code ncclGetUniqueId}: the {@value NcclConstants#UNIQUE_ID_BYTES} bytes rank 0 hands to every rank. */
    byte[] uniqueId();

    /** {@code ncclCommInitRank}: blocks until every rank joined; returns the communicator handle. */
    long commInitRank(int nranks, byte[] uniqueId, int rank);

    /** {@code ncclCommDestroy}: frees the communicator once its queued work finished. */
    void commDestroy(long comm);

    /** {@code ncclCommAbort}: frees the communicator and aborts its running work, without waiting for peers. */
    void commAbort(long comm);

    /** {@code ncclCommGetAsyncError}: the communicator's asynchronous error, {@link NcclConstants#SUCCESS} if none. */
    int commGetAsyncError(long comm);

    /** {@code ncclGetErrorString}. */
    String errorString(int result);

    /** {@code ncclGetLastError}: the last error's message, possibly empty. */
    String lastError(long comm);

    /** {@code ncclAllReduce}. */
    void allReduce(long send, long recv, long count, int dtype, int op, long comm, long stream);

    /** {@code ncclBroadcast}. */
    void broadcast(long send, long recv, long count, int dtype, int root, long comm, long stream);

    /** {@code ncclReduce}. */
    void reduce(long send, long recv, long count, int dtype, int op, int root, long comm, long stream);

    /**
     * {@code ncclAllGather}: {@code recv} holds {@code nranks * sendCount} elements, rank r's at {@code r * sendCount}.
     */
    void allGather(long send, long recv, long sendCount, int dtype, long comm, long stream);

    /** {@code ncclReduceScatter}: {@code send} holds {@code nranks * recvCount} elements. */
    void reduceScatter(long send, long recv, long recvCount, int dtype, int op, long comm, long stream);

    /** {@code ncclSend}. */
    void send(long buf, long count, int dtype, int peer, long comm, long stream);

    /** {@code ncclRecv}. */
    void recv(long buf, long count, int dtype, int peer, long comm, long stream);

    /** {@code ncclGroupStart}: the calls up to {@link #groupEnd} are launched together (no deadlock between them). */
    void groupStart();

    /** {@code ncclGroupEnd}. */
    void groupEnd();
}
