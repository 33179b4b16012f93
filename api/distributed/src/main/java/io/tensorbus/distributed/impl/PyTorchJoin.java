package io.tensorbus.distributed.impl;

import io.tensorbus.c10d.Store;
import io.tensorbus.distributed.PrefixStore;
import io.tensorbus.distributed.PyTorchWire;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import java.security.SecureRandom;
import java.time.Duration;

/**
 * What PyTorch's {@code init_process_group} does in the store around its ProcessGroupGloo, done by a JVM rank of a
 * mixed job so the PyTorch ranks find every key they wait for. 1.13 ({@link PyTorchWire#V1_13}): the group's keys
 * under {@code default_pg/0} (the {@code default_pg} prefix of the init-method path, then the group's name,
 * {@code "0"}), the store-based barrier {@code store_based_barrier_key:1}, and rank 0's sequence number
 * {@code SEQ_NUM_STORE_KEY}. 2.2+ ({@link PyTorchWire#V2_2}, from {@code distributed_c10d.py}): the group's name and
 * then the device join with a trailing {@code /} ({@code default_pg/0//cpu/}, the one backend gloo makes for both
 * of its devices), and the store-based barrier is off by default ({@code TORCH_DIST_INIT_BARRIER=0}); rank 0 still
 * writes the sequence number, which later ProcessGroupGloos no longer read, and the other JVM ranks do not wait for it.
 */
public final class PyTorchJoin {
    /** The prefix {@code init_process_group} puts before the store of an init method. */
    public static final String DEFAULT_PG = "default_pg";
    /** The name 1.13 gives the first group it makes ({@code str(_group_count)}). */
    public static final String FIRST_GROUP = "0";
    /** The device of the one backend a 2.2+ {@code init_process_group("gloo")} makes. */
    static final String GLOO_DEVICE = "cpu";
    /** The backend property that marks a group of a job with PyTorch processes; its value names the wire. */
    public static final String INTEROP_PROPERTY = "pytorch.interop";
    static final String BARRIER_PREFIX = "store_based_barrier_key:";
    static final String SEQ_NUM_KEY = "SEQ_NUM_STORE_KEY";
    private static final SecureRandom RANDOM = new SecureRandom();

    private PyTorchJoin() {
    }

    /** The store {@code init_process_group} works in: {@code default_pg/} for an init method, as is for a store. */
    public static Store jobStore(Store store, boolean fromInitMethod) {
        return fromInitMethod ? new PrefixStore(DEFAULT_PG, store) : store;
    }

    /** The store of the default group's ProcessGroupGloo on {@code wire}, inside {@link #jobStore}. */
    public static Store groupStore(Store jobStore, PyTorchWire wire) {
        return groupStore(jobStore, wire, FIRST_GROUP);
    }

    /**
     * The store of group {@code name}'s ProcessGroupGloo on {@code wire}, inside {@link #jobStore}: PyTorch names its
     * groups {@code str(_group_count)} in the order every process makes them, the default group {@code "0"}. From 2.x
     * a new group's store is the default group's own ({@code _world.pg_map} keeps each group's prefixed store, and
     * {@code new_group} takes the default group's), so group "1" sits under {@code default_pg/0//1//cpu/}.
     */
    public static Store groupStore(Store jobStore, PyTorchWire wire, String name) {
        if (wire == PyTorchWire.V1_13) {
            return new PrefixStore(name, jobStore);
        }
        Store parent = name.equals(FIRST_GROUP) ? jobStore : new PrefixStore(FIRST_GROUP + "/", jobStore);
        return new PrefixStore(GLOO_DEVICE + "/", new PrefixStore(name + "/", parent));
    }

    /**
     * The steps after a group's backend is up, on every process of the job, member or not: on 1.13's wire the
     * store-based barrier {@code store_based_barrier_key:<groupCount>} over the whole job (add 1, then wait until
     * every process has), then the group's rank 0 writes its sequence number and its other ranks read it; on 2.2's
     * the group's rank 0 writes it and nobody waits.
     *
     * @param groupCount PyTorch's {@code _group_count} once the group is made: 1 for the default group, n + 1 for
     *     the group named n
     * @param groupRank this process's rank in the group, or -1 when it is not a member
     * @param jobSize the number of processes in the job
     */
    public static Future<Void> afterBackend(Vertx vertx, Store jobStore, PyTorchWire wire, int groupCount,
                                            int groupRank, int jobSize, Duration timeout) {
        Store group = groupStore(jobStore, wire, String.valueOf(groupCount - 1));
        Future<Void> barrier = wire == PyTorchWire.V2_2 ? Future.succeededFuture()
                : storeBasedBarrier(vertx, jobStore, BARRIER_PREFIX + groupCount, jobSize, timeout);
        return barrier.compose(v -> {
            if (groupRank == 0) {
                return group.set(SEQ_NUM_KEY, sequenceNumber());
            }
            return groupRank > 0 && wire == PyTorchWire.V1_13 ? group.get(SEQ_NUM_KEY).mapEmpty()
                    : Future.succeededFuture();
        });
    }

    private static Future<Void> storeBasedBarrier(Vertx vertx, Store jobStore, String key, int jobSize,
                                                  Duration timeout) {
        long deadline = System.nanoTime() + timeout.toNanos();
        return jobStore.add(key, 1).compose(n -> StoreCounter.awaitAtLeast(vertx, () -> jobStore.add(key, 0), n,
                jobSize, deadline, seen -> "PyTorch's store-based barrier '" + key + "' saw " + seen + " of "
                        + jobSize + " processes within " + timeout.toMillis() + " ms"));
    }

    /** 1 plus a random number, as ProcessGroupGloo's rank 0 makes it, in the little-endian bytes of {@code toVec}. */
    private static byte[] sequenceNumber() {
        long seq = 1 + (RANDOM.nextInt() & 0x7fffffffL);
        byte[] b = new byte[8];
        for (int i = 0; i < 8; i++) {
            b[i] = (byte) (seq >>> (8 * i));
        }
        return b;
    }
}
