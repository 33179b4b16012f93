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
    static final String BARRIER_KEY = "store_based_barrier_key:1";
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
        return wire == PyTorchWire.V1_13 ? new PrefixStore(FIRST_GROUP, jobStore)
                : new PrefixStore(GLOO_DEVICE + "/", new PrefixStore(FIRST_GROUP + "/", jobStore));
    }

    /**
     * The steps after the group's backend is up. On 1.13's wire the store-based barrier (add 1, then wait until every
     * rank has), then rank 0 writes the group's sequence number and the others read it; on 2.2's rank 0 writes it.
     */
    public static Future<Void> afterBackend(Vertx vertx, Store jobStore, PyTorchWire wire, int rank, int worldSize,
                                            Duration timeout) {
        Store group = groupStore(jobStore, wire);
        if (wire == PyTorchWire.V2_2) {
            return rank == 0 ? group.set(SEQ_NUM_KEY, sequenceNumber()) : Future.succeededFuture();
        }
        long deadline = System.nanoTime() + timeout.toNanos();
        return jobStore.add(BARRIER_KEY, 1)
                .compose(n -> StoreCounter.awaitAtLeast(vertx, () -> jobStore.add(BARRIER_KEY, 0), n, worldSize,
                        deadline, seen -> "PyTorch's store-based barrier '" + BARRIER_KEY + "' saw " + seen + " of "
                                + worldSize + " ranks within " + timeout.toMillis() + " ms"))
                .compose(v -> rank == 0 ? group.set(SEQ_NUM_KEY, sequenceNumber()) : group.get(SEQ_NUM_KEY).mapEmpty());
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
