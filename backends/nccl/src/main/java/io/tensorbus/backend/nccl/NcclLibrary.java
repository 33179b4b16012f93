package io.tensorbus.backend.nccl;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.StructLayout;
import java.lang.foreign.SymbolLookup;
import java.lang.invoke.MethodHandle;
import java.nio.file.Path;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * NCCL through the FFM API: hand-written downcalls of {@code libnccl.so.2}'s C functions. Handles
 * ({@code ncclComm_t}, {@code cudaStream_t}) and device buffers are addresses; {@code size_t} is 64 bits;
 * enums are {@code int}; {@code ncclUniqueId} is a 128-byte struct passed by value.
 */
final class NcclLibrary implements Nccl {
    /** {@code typedef struct { char internal[NCCL_UNIQUE_ID_BYTES]; } ncclUniqueId;} */
    static final StructLayout UNIQUE_ID = MemoryLayout.structLayout(
            MemoryLayout.sequenceLayout(NcclConstants.UNIQUE_ID_BYTES, JAVA_BYTE).withName("internal"))
            .withName("ncclUniqueId");

    static final FunctionDescriptor GET_VERSION = FunctionDescriptor.of(JAVA_INT, ADDRESS);
    static final FunctionDescriptor GET_UNIQUE_ID = FunctionDescriptor.of(JAVA_INT, ADDRESS);
    static final FunctionDescriptor COMM_INIT_RANK = FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT, UNIQUE_ID,
            JAVA_INT);
    static final FunctionDescriptor COMM_HANDLE = FunctionDescriptor.of(JAVA_INT, ADDRESS);
    static final FunctionDescriptor COMM_GET_ASYNC_ERROR = FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS);
    static final FunctionDescriptor GET_ERROR_STRING = FunctionDescriptor.of(ADDRESS, JAVA_INT);
    static final FunctionDescriptor GET_LAST_ERROR = FunctionDescriptor.of(ADDRESS, ADDRESS);
    /** ncclAllReduce(sendbuff, recvbuff, count, datatype, op, comm, stream). */
    static final FunctionDescriptor ALL_REDUCE = FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, JAVA_LONG,
            JAVA_INT, JAVA_INT, ADDRESS, ADDRESS);
    /** ncclBroadcast(sendbuff, recvbuff, count, datatype, root, comm, stream). */
    static final FunctionDescriptor BROADCAST = ALL_REDUCE;
    /** ncclReduce(sendbuff, recvbuff, count, datatype, op, root, comm, stream). */
    static final FunctionDescriptor REDUCE = FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, JAVA_LONG, JAVA_INT,
            JAVA_INT, JAVA_INT, ADDRESS, ADDRESS);
    /** ncclAllGather(sendbuff, recvbuff, sendcount, datatype, comm, stream). */
    static final FunctionDescriptor ALL_GATHER = FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, JAVA_LONG,
            JAVA_INT, ADDRESS, ADDRESS);
    /** ncclReduceScatter(sendbuff, recvbuff, recvcount, datatype, op, comm, stream). */
    static final FunctionDescriptor REDUCE_SCATTER = ALL_REDUCE;
    /** ncclSend(sendbuff, count, datatype, peer, comm, stream) and ncclRecv alike. */
    static final FunctionDescriptor SEND_RECV = FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_LONG, JAVA_INT,
            JAVA_INT, ADDRESS, ADDRESS);
    static final FunctionDescriptor GROUP = FunctionDescriptor.of(JAVA_INT);

    private final Path path;
    private final MethodHandle getVersion;
    private final MethodHandle getUniqueId;
    private final MethodHandle commInitRank;
    private final MethodHandle commDestroy;
    private final MethodHandle commAbort;
    private final MethodHandle commGetAsyncError;
    private final MethodHandle getErrorString;
    private final MethodHandle getLastError;
    private final MethodHandle allReduce;
    private final MethodHandle broadcast;
    private final MethodHandle reduce;
    private final MethodHandle allGather;
    private final MethodHandle reduceScatter;
    private final MethodHandle send;
    private final MethodHandle recv;
    private final MethodHandle groupStart;
    private final MethodHandle groupEnd;

    /**
     * Binds the library at {@code path} (loaded once, for the life of the JVM).
     *
     * @throws IllegalArgumentException when the library cannot be loaded or lacks a function the backend calls
     */
    NcclLibrary(Path path) {
        this.path = path;
        SymbolLookup lib = SymbolLookup.libraryLookup(path, Arena.global());
        Linker linker = Linker.nativeLinker();
        getVersion = bind(lib, linker, "ncclGetVersion", GET_VERSION);
        getUniqueId = bind(lib, linker, "ncclGetUniqueId", GET_UNIQUE_ID);
        commInitRank = bind(lib, linker, "ncclCommInitRank", COMM_INIT_RANK);
        commDestroy = bind(lib, linker, "ncclCommDestroy", COMM_HANDLE);
        commAbort = bind(lib, linker, "ncclCommAbort", COMM_HANDLE);
        commGetAsyncError = bind(lib, linker, "ncclCommGetAsyncError", COMM_GET_ASYNC_ERROR);
        getErrorString = bind(lib, linker, "ncclGetErrorString", GET_ERROR_STRING);
        getLastError = bind(lib, linker, "ncclGetLastError", GET_LAST_ERROR);
        allReduce = bind(lib, linker, "ncclAllReduce", ALL_REDUCE);
        broadcast = bind(lib, linker, "ncclBroadcast", BROADCAST);
        reduce = bind(lib, linker, "ncclReduce", REDUCE);
        allGather = bind(lib, linker, "ncclAllGather", ALL_GATHER);
        reduceScatter = bind(lib, linker, "ncclReduceScatter", REDUCE_SCATTER);
        send = bind(lib, linker, "ncclSend", SEND_RECV);
        recv = bind(lib, linker, "ncclRecv", SEND_RECV);
        groupStart = bind(lib, linker, "ncclGroupStart", GROUP);
        groupEnd = bind(lib, linker, "ncclGroupEnd", GROUP);
    }

    private MethodHandle bind(SymbolLookup lib, Linker linker, String name, FunctionDescriptor descriptor) {
        MemorySegment symbol = lib.find(name).orElseThrow(() -> new IllegalArgumentException(path + " has no " + name
                + ": it is not NCCL 2.19 or newer"));
        return linker.downcallHandle(symbol, descriptor);
    }

    /** Where the library was loaded from. */
    Path path() {
        return path;
    }

    @Override
    public int version() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment v = arena.allocate(JAVA_INT);
            check("ncclGetVersion", (int) getVersion.invokeExact(v), 0);
            return v.get(JAVA_INT, 0);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    @Override
    public byte[] uniqueId() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment id = arena.allocate(UNIQUE_ID);
            check("ncclGetUniqueId", (int) getUniqueId.invokeExact(id), 0);
            return id.toArray(JAVA_BYTE);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    @Override
    public long commInitRank(int nranks, byte[] uniqueId, int rank) {
        if (uniqueId.length != NcclConstants.UNIQUE_ID_BYTES) {
            throw new IllegalArgumentException("an ncclUniqueId has " + NcclConstants.UNIQUE_ID_BYTES + " bytes, not "
                    + uniqueId.length);
        }
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment comm = arena.allocate(ADDRESS);
            MemorySegment id = arena.allocate(UNIQUE_ID);
            id.copyFrom(MemorySegment.ofArray(uniqueId));
            check("ncclCommInitRank", (int) commInitRank.invokeExact(comm, nranks, id, rank), 0);
            return comm.get(ADDRESS, 0).address();
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    @Override
    public void commDestroy(long comm) {
        call("ncclCommDestroy", comm, commDestroy);
    }

    @Override
    public void commAbort(long comm) {
        call("ncclCommAbort", comm, commAbort);
    }

    private void call(String name, long comm, MethodHandle handle) {
        try {
            check(name, (int) handle.invokeExact(MemorySegment.ofAddress(comm)), comm);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    @Override
    public int commGetAsyncError(long comm) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment error = arena.allocate(JAVA_INT);
            check("ncclCommGetAsyncError", (int) commGetAsyncError.invokeExact(MemorySegment.ofAddress(comm), error),
                    comm);
            return error.get(JAVA_INT, 0);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    @Override
    public String errorString(int result) {
        try {
            return cString((MemorySegment) getErrorString.invokeExact(result));
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    @Override
    public String lastError(long comm) {
        try {
            return cString((MemorySegment) getLastError.invokeExact(MemorySegment.ofAddress(comm)));
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    @Override
    public void allReduce(long send, long recv, long count, int dtype, int op, long comm, long stream) {
        try {
            check("ncclAllReduce", (int) allReduce.invokeExact(a(send), a(recv), count, dtype, op, a(comm), a(stream)),
                    comm);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    @Override
    public void broadcast(long send, long recv, long count, int dtype, int root, long comm, long stream) {
        try {
            check("ncclBroadcast", (int) broadcast.invokeExact(a(send), a(recv), count, dtype, root, a(comm),
                    a(stream)), comm);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    @Override
    public void reduce(long send, long recv, long count, int dtype, int op, int root, long comm, long stream) {
        try {
            check("ncclReduce", (int) reduce.invokeExact(a(send), a(recv), count, dtype, op, root, a(comm), a(stream)),
                    comm);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    @Override
    public void allGather(long send, long recv, long sendCount, int dtype, long comm, long stream) {
        try {
            check("ncclAllGather", (int) allGather.invokeExact(a(send), a(recv), sendCount, dtype, a(comm), a(stream)),
                    comm);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    @Override
    public void reduceScatter(long send, long recv, long recvCount, int dtype, int op, long comm, long stream) {
        try {
            check("ncclReduceScatter", (int) reduceScatter.invokeExact(a(send), a(recv), recvCount, dtype, op, a(comm),
                    a(stream)), comm);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    @Override
    public void send(long buf, long count, int dtype, int peer, long comm, long stream) {
        try {
            check("ncclSend", (int) send.invokeExact(a(buf), count, dtype, peer, a(comm), a(stream)), comm);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    @Override
    public void recv(long buf, long count, int dtype, int peer, long comm, long stream) {
        try {
            check("ncclRecv", (int) recv.invokeExact(a(buf), count, dtype, peer, a(comm), a(stream)), comm);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    @Override
    public void groupStart() {
        try {
            check("ncclGroupStart", (int) groupStart.invokeExact(), 0);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    @Override
    public void groupEnd() {
        try {
            check("ncclGroupEnd", (int) groupEnd.invokeExact(), 0);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    private static MemorySegment a(long address) {
        return MemorySegment.ofAddress(address);
    }

    /** Throws for a failed result, with NCCL's description and, given a communicator, its last error. */
    private void check(String call, int result, long comm) {
        if (result != NcclConstants.SUCCESS && result != NcclConstants.IN_PROGRESS) {
            String detail = errorString(result);
            if (comm != 0) {
                String last = lastError(comm);
                detail = last.isBlank() ? detail : detail + " (" + last + ")";
            }
            throw new NcclException(call, result, detail);
        }
    }

    private static String cString(MemorySegment s) {
        return s.equals(MemorySegment.NULL) ? "" : s.reinterpret(Long.MAX_VALUE).getString(0);
    }

    private static RuntimeException rethrow(Throwable t) {
        if (t instanceof RuntimeException r) {
            return r;
        }
        if (t instanceof Error e) {
            throw e;
        }
        return new IllegalStateException(t);
    }
}
