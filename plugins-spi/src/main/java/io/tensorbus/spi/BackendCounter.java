package io.tensorbus.spi;

import java.util.Objects;
import java.util.function.DoubleSupplier;
import java.util.regex.Pattern;

/**
 * A running total a {@link Backend} keeps about its own work, which the distributed layer publishes as the counter
 * {@code tensorbus.backend.NAME} (tagged with the group, the rank and the backend) while metrics are on: the times
 * its shared-memory rings were full, say. Read from any thread at any time, so {@code total} must be cheap and safe
 * to call concurrently with the backend's work.
 *
 * @param name the counter's name below {@code tensorbus.backend.}: lowercase words joined by dots
 * @param baseUnit the unit of the total ({@code "bytes"}, {@code "seconds"}), or null for a plain count
 * @param description one sentence on what it counts
 * @param total reads the total so far, which never decreases
 */
public record BackendCounter(String name, String baseUnit, String description, DoubleSupplier total) {
    private static final Pattern NAME = Pattern.compile("[a-z][a-z0-9]*(\\.[a-z][a-z0-9]*)*");

    /**
     * Checks the name and that nothing but the unit is null.
     *
     * @throws IllegalArgumentException when {@code name} is not lowercase words joined by dots
     */
    public BackendCounter {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(description, "description");
        Objects.requireNonNull(total, "total");
        if (!NAME.matcher(name).matches()) {
            throw new IllegalArgumentException("a backend counter's name is lowercase words joined by dots, such as"
                    + " shm.ring.full; got '" + name + "'");
        }
    }
}
