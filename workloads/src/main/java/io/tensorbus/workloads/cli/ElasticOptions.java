package io.tensorbus.workloads.cli;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * torchrun's elastic rendezvous options: how many nodes ({@code --nnodes MIN:MAX}), where their rendezvous lives
 * ({@code --rdzv-backend}, {@code --rdzv-endpoint}), the job's id ({@code --rdzv-id}) and its timeouts
 * ({@code --rdzv-conf}).
 *
 * @param minNodes the fewest nodes the job runs on
 * @param maxNodes the most nodes it admits
 * @param backend {@code c10d} or {@code hazelcast}
 * @param endpoints the c10d store's {@code HOST:PORT}, or the Hazelcast members to join through (one or more)
 * @param runId the job's id, the same on every node (torchrun's {@code TORCHELASTIC_RUN_ID})
 * @param joinTimeout how long a node waits for a round to complete
 * @param lastCallTimeout how long a round that has {@code minNodes} waits for more before it closes
 */
public record ElasticOptions(int minNodes, int maxNodes, String backend, List<Endpoint> endpoints, String runId,
        Duration joinTimeout, Duration lastCallTimeout) {
    /** torchrun's default join timeout. */
    public static final Duration DEFAULT_JOIN_TIMEOUT = Duration.ofSeconds(600);

    /** torchrun's default last-call timeout. */
    public static final Duration DEFAULT_LAST_CALL = Duration.ofSeconds(30);

    /** The backends. */
    public static final List<String> BACKENDS = List.of("c10d", "hazelcast");

    /** A host and port. */
    public record Endpoint(String host, int port) {
        @Override
        public String toString() {
            return host + ":" + port;
        }
    }

    /** The first endpoint. */
    public Endpoint endpoint() {
        return endpoints.get(0);
    }

    /**
     * {@code --nnodes} as {@code [min, max]}: {@code N} is {@code [N, N]}, {@code MIN:MAX} a range, null
     * {@code [1, 1]}.
     *
     * @throws IllegalArgumentException naming what is allowed
     */
    static int[] nodeRange(String spec) {
        if (spec == null) {
            return new int[] {1, 1};
        }
        String[] parts = spec.split(":", -1);
        try {
            int min = Integer.parseInt(parts[0].trim());
            int max = parts.length == 2 ? Integer.parseInt(parts[1].trim()) : min;
            if (parts.length <= 2 && min >= 1 && max >= min) {
                return new int[] {min, max};
            }
        } catch (NumberFormatException e) {
            // Said below.
        }
        throw new IllegalArgumentException("--nnodes must be a whole number >= 1 or MIN:MAX with 1 <= MIN <= MAX, got '"
                + spec + "'");
    }

    /**
     * Checks and builds the options.
     *
     * @param backend null for none given
     * @param endpoint {@code HOST:PORT}, or several joined by commas (hazelcast only)
     * @param runId null for torchrun's default, {@code none}
     * @param conf {@code key=value} pairs joined by commas, or null
     * @throws IllegalArgumentException naming the option that is wrong and what it allows
     */
    static ElasticOptions of(int min, int max, String backend, String endpoint, String runId, String conf) {
        if (backend == null || !BACKENDS.contains(backend)) {
            throw new IllegalArgumentException("--rdzv-backend must be one of " + BACKENDS + " for an elastic job"
                    + " (--nnodes MIN:MAX or --rdzv-*), got " + (backend == null ? "none" : "'" + backend + "'"));
        }
        List<Endpoint> endpoints = endpoints(endpoint);
        if (endpoints.size() > 1 && backend.equals("c10d")) {
            throw new IllegalArgumentException("--rdzv-endpoint of the c10d backend is one HOST:PORT, got '" + endpoint
                    + "'");
        }
        String id = runId == null ? "none" : runId;
        if (!id.matches("[A-Za-z0-9_.-]{1,64}")) {
            throw new IllegalArgumentException("--rdzv-id may hold 1 to 64 letters, digits and -_. , got '" + id + "'");
        }
        Duration join = DEFAULT_JOIN_TIMEOUT;
        Duration lastCall = DEFAULT_LAST_CALL;
        for (String pair : conf == null || conf.isBlank() ? new String[0] : conf.split(",")) {
            String[] kv = pair.split("=", 2);
            String key = kv[0].trim();
            Duration value = kv.length == 2 ? seconds(key, kv[1]) : null;
            switch (key) {
                case "join_timeout" -> join = required(key, value);
                case "last_call_timeout" -> lastCall = required(key, value);
                default -> throw new IllegalArgumentException("--rdzv-conf knows join_timeout and last_call_timeout,"
                        + " got '" + pair.trim() + "'");
            }
        }
        return new ElasticOptions(min, max, backend, endpoints, id, join, lastCall);
    }

    private static List<Endpoint> endpoints(String spec) {
        List<Endpoint> all = new ArrayList<>();
        for (String one : spec.split(",")) {
            String e = one.trim();
            int colon = e.lastIndexOf(':');
            int port = -1;
            try {
                port = colon > 0 ? Integer.parseInt(e.substring(colon + 1)) : -1;
            } catch (NumberFormatException ex) {
                // Said below.
            }
            if (colon <= 0 || port < 1 || port > 65535) {
                throw new IllegalArgumentException("--rdzv-endpoint must be HOST:PORT with a port 1 to 65535, got '" + e
                        + "'");
            }
            String host = e.substring(0, colon);
            all.add(new Endpoint(host.startsWith("[") ? host.substring(1, host.length() - 1) : host, port));
        }
        return List.copyOf(all);
    }

    private static Duration seconds(String key, String text) {
        try {
            long s = Long.parseLong(text.trim());
            if (s > 0) {
                return Duration.ofSeconds(s);
            }
        } catch (NumberFormatException e) {
            // Said below.
        }
        throw new IllegalArgumentException("--rdzv-conf " + key + " must be a whole number of seconds above 0, got '"
                + text + "'");
    }

    private static Duration required(String key, Duration value) {
        if (value == null) {
            throw new IllegalArgumentException("--rdzv-conf " + key + " needs a value: " + key + "=SECONDS");
        }
        return value;
    }
}
