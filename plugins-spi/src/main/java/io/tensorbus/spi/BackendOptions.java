package io.tensorbus.spi;

import io.tensorbus.c10d.JobSecret;
import io.tensorbus.c10d.Store;
import io.vertx.core.Vertx;
import java.time.Duration;
import java.util.Map;
import java.util.Objects;

/**
 * What a {@link BackendProvider} needs to create the backend of one process group: this process's rank in
 * the group, the group size, the store the members rendezvous through (already scoped to the group by a
 * prefix), the per-operation timeout, the group's name for messages, and the Vert.x instance whose event
 * loops carry the traffic. {@code properties} carries backend-specific settings ({@code tcp.bindHost}, ...).
 * A backend that opens connections of its own proves {@code secret} on each (as ours do with
 * {@code io.tensorbus.spi.support.SecretHandshake}) and, without one, listens on loopback addresses only
 * ({@link JobSecret#checkBind}).
 *
 * @param rank this process's rank in the group, in {@code [0, worldSize)}
 * @param worldSize the number of members, at least 1
 * @param store the rendezvous store, scoped to this group
 * @param timeout the deadline of every operation of the group, positive
 * @param groupName the group's name, used in error messages and frame checks
 * @param globalRanks the global rank of each group member, indexed by group rank (for messages)
 * @param vertx the Vert.x instance to run on
 * @param properties backend-specific settings, never null
 * @param secret the job's secret, {@link JobSecret#none()} when it has none
 */
public record BackendOptions(int rank, int worldSize, Store store, Duration timeout, String groupName,
                             int[] globalRanks, Vertx vertx, Map<String, String> properties, JobSecret secret) {

    /**
     * Checks the fields.
     *
     * @throws IllegalArgumentException when the rank is outside {@code [0, worldSize)}, the timeout is not
     *         positive or {@code globalRanks} does not have {@code worldSize} entries
     */
    public BackendOptions {
        Objects.requireNonNull(store, "store");
        Objects.requireNonNull(timeout, "timeout");
        Objects.requireNonNull(groupName, "groupName");
        Objects.requireNonNull(vertx, "vertx");
        Objects.requireNonNull(secret, "secret (JobSecret.none() for none)");
        properties = properties == null ? Map.of() : Map.copyOf(properties);
        if (worldSize < 1) {
            throw new IllegalArgumentException("worldSize=" + worldSize + " must be at least 1");
        }
        if (rank < 0 || rank >= worldSize) {
            throw new IllegalArgumentException("rank=" + rank + " is outside [0, " + worldSize + ")");
        }
        if (timeout.isNegative() || timeout.isZero()) {
            throw new IllegalArgumentException("timeout=" + timeout + " must be positive");
        }
        if (globalRanks == null) {
            globalRanks = new int[worldSize];
            for (int i = 0; i < worldSize; i++) {
                globalRanks[i] = i;
            }
        } else if (globalRanks.length != worldSize) {
            throw new IllegalArgumentException("globalRanks has " + globalRanks.length + " entries for a group of "
                    + worldSize);
        } else {
            globalRanks = globalRanks.clone();
        }
    }

    /** Options without a job secret: the backend may listen on loopback addresses only. */
    public BackendOptions(int rank, int worldSize, Store store, Duration timeout, String groupName,
                          int[] globalRanks, Vertx vertx, Map<String, String> properties) {
        this(rank, worldSize, store, timeout, groupName, globalRanks, vertx, properties, JobSecret.none());
    }

    /** The global rank of each member (a copy). */
    @Override
    public int[] globalRanks() {
        return globalRanks.clone();
    }

    /**
     * The property that carries the deadline of the backend's set-up in milliseconds ({@link #setupTimeout()});
     * the api sets it from its own set-up deadline.
     */
    public static final String SETUP_TIMEOUT_MILLIS = "setupTimeoutMillis";

    /**
     * How long the backend's set-up (connecting to every peer) may take: {@value #SETUP_TIMEOUT_MILLIS} when set,
     * else {@link #timeout()}.
     *
     * @throws IllegalArgumentException when the property is not a positive whole number
     */
    public Duration setupTimeout() {
        String text = properties.get(SETUP_TIMEOUT_MILLIS);
        if (text == null) {
            return timeout;
        }
        try {
            long millis = Long.parseLong(text.trim());
            if (millis > 0) {
                return Duration.ofMillis(millis);
            }
        } catch (NumberFormatException e) {
            // Said below.
        }
        throw new IllegalArgumentException(SETUP_TIMEOUT_MILLIS + "='" + text + "' must be a positive number of"
                + " milliseconds");
    }

    /** A backend-specific setting, or {@code defaultValue} when absent. */
    public String property(String key, String defaultValue) {
        return properties.getOrDefault(key, defaultValue);
    }
}
