package io.tensorbus.distributed.rpc;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** The workers of a job as the rendezvous found them: names, ranks and where each one listens. */
final class RpcWorkerTable {
    /**
     * Where a worker accepts connections, the id of its node in the Vert.x cluster (empty when its Vert.x is not
     * clustered), and its shared-memory host identity (empty when it takes no shared-memory connections).
     */
    record Address(String host, int port, String node, String sharedMemoryHost) {
    }

    private final WorkerInfo self;
    private final List<WorkerInfo> workers;
    private final List<Address> addresses;
    private final Map<String, WorkerInfo> byName = new LinkedHashMap<>();

    /**
     * @throws IllegalArgumentException naming both ranks when two workers have the same name
     */
    RpcWorkerTable(int selfRank, List<WorkerInfo> workers, List<Address> addresses) {
        this.workers = List.copyOf(workers);
        this.addresses = List.copyOf(addresses);
        for (WorkerInfo w : workers) {
            WorkerInfo twin = byName.putIfAbsent(w.name(), w);
            if (twin != null) {
                throw new IllegalArgumentException("worker name '" + w.name() + "' is taken by rank " + twin.id()
                        + " and rank " + w.id() + "; every worker needs its own name");
            }
        }
        this.self = workers.get(selfRank);
    }

    WorkerInfo self() {
        return self;
    }

    List<WorkerInfo> workers() {
        return workers;
    }

    Address address(WorkerInfo w) {
        return addresses.get(w.id());
    }

    WorkerInfo byName(String name) {
        WorkerInfo w = name == null ? null : byName.get(name);
        if (w == null) {
            throw new IllegalArgumentException("no worker is called " + (name == null ? "null" : "'" + name + "'")
                    + "; the workers are " + byName.keySet());
        }
        return w;
    }

    WorkerInfo byRank(int rank) {
        if (rank < 0 || rank >= workers.size()) {
            throw new IllegalArgumentException("worker id " + rank + " is not a rank of this job (0 to "
                    + (workers.size() - 1) + ")");
        }
        return workers.get(rank);
    }

    /** {@code w} itself when it is a worker of this job. */
    WorkerInfo check(WorkerInfo w) {
        if (w == null) {
            throw new NullPointerException("the target worker must not be null");
        }
        if (w.id() >= workers.size() || !workers.get(w.id()).equals(w)) {
            throw new IllegalArgumentException(w + " is not a worker of this job; the workers are " + workers);
        }
        return w;
    }
}
