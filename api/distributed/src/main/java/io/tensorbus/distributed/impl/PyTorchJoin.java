package io.tensorbus.distributed.impl;

import io.tensorbus.c10d.Store;
import io.tensorbus.distributed.PrefixStore;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import java.security.SecureRandom;
import java.time.Duration;

/**
 * What PyTorch 1.13's {@code init_process_group} does in the store around its ProcessGroupGloo, done by a JVM rank of
 * a mixed job so the PyTorch ranks find every key they wait for: the group's keys under {@code default_pg/0} (the
 * {@code default_pg} prefix of the init-method path, then the group's name, {@code "0"}), the store-based barrier
 * {@code store_based_barrier_key:1}, and rank 0's sequence number {@code SEQ_NUM_STORE_KEY}.
 */
public final class PyTorchJoin {
    /** The prefix {@code init_process_group} puts before the store of an init method. */
    public static final String DEFAULT_PG = "default_pg";
    /** The name 1.13 gives the first group it makes ({@code str(_group_count)}). */
    public static final String FIRST_GROUP = "0";
    /** The backend property that marks a group of a job with PyTorch processes. */
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

    /** The store of the default group's ProcessGroupGloo, inside {@link #jobStore}. */
    public static Store groupStore(Store jobStore) {
        return new PrefixStore(FIRST_GROUP, jobStore);
    }

    /**
     * The steps after the group's backend is up: the store-based barrier (add 1, then wait until every rank has),
     * then rank 0 writes the group's sequence number and the others read it.
     */
    public static Future<Void> afterBackend(Vertx vertx, Store jobStore, int rank, int worldSize, Duration timeout) {
        long deadline = System.nanoTime() + timeout.toNanos();
        Store group = groupStore(jobStore);
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
