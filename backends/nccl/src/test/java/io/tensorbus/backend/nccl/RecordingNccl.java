package io.tensorbus.backend.nccl;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A test double of NCCL that records every call as a line ({@code allReduce send=.. recv=.. count=.. ...}) and
 * fails a call on demand, with an asynchronous error that tests set. It moves no data: the tests check what the
 * backend asks NCCL to do, and what it does with NCCL's answers.
 */
final class RecordingNccl implements Nccl {
    final List<String> calls = Collections.synchronizedList(new ArrayList<>());
    final AtomicInteger aborts = new AtomicInteger();
    final AtomicInteger destroys = new AtomicInteger();
    volatile int asyncError = NcclConstants.SUCCESS;
    /** A call whose name starts with this fails with {@link #failWith}. */
    volatile String failCall;
    volatile int failWith = NcclConstants.INVALID_USAGE;
    volatile byte[] lastUniqueId;

    private void record(String line) {
        calls.add(line);
        if (failCall != null && line.startsWith(failCall)) {
            throw new NcclException(line.split(" ")[0], failWith, "injected by the test");
        }
    }

    @Override
    public int version() {
        return 22304;
    }

    @Override
    public byte[] uniqueId() {
        byte[] id = new byte[NcclConstants.UNIQUE_ID_BYTES];
        for (int i = 0; i < id.length; i++) {
            id[i] = (byte) (i * 7 + 3);
        }
        return id;
    }

    @Override
    public long commInitRank(int nranks, byte[] uniqueId, int rank) {
        lastUniqueId = uniqueId.clone();
        record("commInitRank nranks=" + nranks + " rank=" + rank);
        return 0x1000 + rank;
    }

    @Override
    public void commDestroy(long comm) {
        destroys.incrementAndGet();
        record("commDestroy");
    }

    @Override
    public void commAbort(long comm) {
        aborts.incrementAndGet();
        record("commAbort");
    }

    @Override
    public int commGetAsyncError(long comm) {
        return asyncError;
    }

    @Override
    public String errorString(int result) {
        return "error string of " + NcclConstants.resultName(result);
    }

    @Override
    public String lastError(long comm) {
        return "last error of the test";
    }

    @Override
    public void allReduce(long send, long recv, long count, int dtype, int op, long comm, long stream) {
        record("allReduce send=" + send + " recv=" + recv + " count=" + count + " dtype=" + dtype + " op=" + op);
    }

    @Override
    public void broadcast(long send, long recv, long count, int dtype, int root, long comm, long stream) {
        record("broadcast send=" + send + " recv=" + recv + " count=" + count + " dtype=" + dtype + " root=" + root);
    }

    @Override
    public void reduce(long send, long recv, long count, int dtype, int op, int root, long comm, long stream) {
        record("reduce send=" + send + " recv=" + recv + " count=" + count + " dtype=" + dtype + " op=" + op
                + " root=" + root);
    }

    @Override
    public void allGather(long send, long recv, long sendCount, int dtype, long comm, long stream) {
        record("allGather send=" + send + " recv=" + recv + " count=" + sendCount + " dtype=" + dtype);
    }

    @Override
    public void reduceScatter(long send, long recv, long recvCount, int dtype, int op, long comm, long stream) {
        record("reduceScatter send=" + send + " recv=" + recv + " count=" + recvCount + " dtype=" + dtype + " op="
                + op);
    }

    @Override
    public void send(long buf, long count, int dtype, int peer, long comm, long stream) {
        record("send buf=" + buf + " count=" + count + " dtype=" + dtype + " peer=" + peer);
    }

    @Override
    public void recv(long buf, long count, int dtype, int peer, long comm, long stream) {
        record("recv buf=" + buf + " count=" + count + " dtype=" + dtype + " peer=" + peer);
    }

    @Override
    public void groupStart() {
        record("groupStart");
    }

    @Override
    public void groupEnd() {
        record("groupEnd");
    }
}
