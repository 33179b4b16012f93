package io.tensorbus.distributed;

import io.tensorbus.Device;
import io.tensorbus.c10d.JobSecret;
import io.tensorbus.c10d.Store;
import io.vertx.core.Vertx;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.Objects;

/**
 * The arguments of {@link Distributed#initProcessGroup}: {@code init_process_group}'s backend, init method,
 * rank, world size, timeout and group name, plus the Vert.x instance to run on. Unset rank and world size
 * come from the environment ({@code RANK}, {@code WORLD_SIZE}) as with {@code env://}.
 *
 * <pre>{@code
 * ProcessGroup pg = Distributed.initProcessGroup(InitOptions.builder()
 *         .initMethod("tcp://127.0.0.1:29500").rank(rank).worldSize(2).build()).await();
 * }</pre>
 */
public final class InitOptions {

    /**
     * The deadline of set-up when neither the builder nor {@value #SETUP_TIMEOUT_ENV} gives one: 5 minutes (or the
     * group's timeout, when that is shorter).
     */
    public static final Duration DEFAULT_SETUP_TIMEOUT = Duration.ofMinutes(5);

    /** The environment variable that sets the set-up deadline, in seconds ({@link #setupTimeout()}). */
    public static final String SETUP_TIMEOUT_ENV = "TENSORBUS_SETUP_TIMEOUT";

    private final String backend;
    private final String initMethod;
    private final int rank;
    private final int worldSize;
    private final Duration timeout;
    private final String groupName;
    private final Store store;
    private final Vertx vertx;
    private final Map<String, String> properties;
    private final Map<String, String> environment;
    private final JobSecret secret;
    private final Duration setupTimeout;
    private final PyTorchWire pytorchWire;

    /**
     * The environment variable that turns {@link #pytorchInterop()} on, naming the PyTorch version of the job's other
     * processes ({@code 1.13}, {@code 2.4.0}), as {@code --pytorch-interop}.
     */
    public static final String PYTORCH_INTEROP_ENV = "TENSORBUS_PYTORCH_INTEROP";

    private InitOptions(Builder b) {
        this.backend = b.backend;
        this.initMethod = b.initMethod;
        this.rank = b.rank;
        this.worldSize = b.worldSize;
        this.timeout = b.timeout;
        this.groupName = b.groupName;
        this.store = b.store;
        this.vertx = b.vertx;
        this.properties = Map.copyOf(b.properties);
        this.environment = b.environment == null ? Distributed.environment() : Map.copyOf(b.environment);
        this.secret = b.secret != null ? b.secret : JobSecret.fromEnvironment(environment);
        Duration setup = b.setupTimeout != null ? b.setupTimeout : setupTimeoutOf(environment);
        this.setupTimeout = setup.compareTo(timeout) < 0 ? setup : timeout;
        this.pytorchWire = b.pytorchWire != null ? b.pytorchWire : wireOf(environment.get(PYTORCH_INTEROP_ENV));
        if (pytorchWire != null && store == null && !backend.equals("gloo")) {
            throw new IllegalArgumentException("PyTorch interop needs backend 'gloo' (ProcessGroupGloo's wire), not '"
                    + backend + "'");
        }
    }

    /**
     * {@value #SETUP_TIMEOUT_ENV} of {@code env} as a duration, else {@link #DEFAULT_SETUP_TIMEOUT}; launchers use
     * it for their own set-up.
     *
     * @throws IllegalArgumentException when the variable is not a whole number of seconds above 0
     */
    public static Duration setupTimeoutOf(Map<String, String> env) {
        String text = env.get(SETUP_TIMEOUT_ENV);
        if (text == null || text.isBlank()) {
            return DEFAULT_SETUP_TIMEOUT;
        }
        try {
            long seconds = Long.parseLong(text.trim());
            if (seconds > 0) {
                return Duration.ofSeconds(seconds);
            }
        } catch (NumberFormatException e) {
            // Said below, with what is allowed.
        }
        throw new IllegalArgumentException(SETUP_TIMEOUT_ENV + "='" + text + "' must be a whole number of seconds"
                + " above 0");
    }

    /** A builder with PyTorch's defaults: backend {@code tcp}, {@code env://}, 30 minutes, group "default". */
    public static Builder builder() {
        return new Builder();
    }

    /** The backend's name ({@code "tcp"} by default). */
    public String backend() {
        return backend;
    }

    /**
     * The init method URL: {@code env://}, {@code tcp://host:port}, {@code file:///path} or {@code cluster://name}
     * (a {@link ClusterStore} named {@code name} in the shared data of the clustered Vert.x given to
     * {@link Builder#vertx}; the backend binds {@code tcp.bindHost}, 127.0.0.1 unless set).
     */
    public String initMethod() {
        return initMethod;
    }

    /** The rank, or -1 to read {@code RANK} from the environment. */
    public int rank() {
        return rank;
    }

    /** The world size, or -1 to read {@code WORLD_SIZE} from the environment. */
    public int worldSize() {
        return worldSize;
    }

    /** The deadline of the set-up and of every operation of the group. */
    public Duration timeout() {
        return timeout;
    }

    /** The group's name; also the prefix of its keys in the store, so several jobs can share one store. */
    public String groupName() {
        return groupName;
    }

    /** An explicit store (instead of the init method's), or null. */
    public Store store() {
        return store;
    }

    /** The Vert.x instance to run on, or null to create one that the group closes with itself. */
    public Vertx vertx() {
        return vertx;
    }

    /**
     * The deadline of set-up: meeting at the store and connecting to every peer. Shorter than {@link #timeout()}
     * by default, so that a peer that never comes is reported in minutes, not after the group's timeout: the
     * builder's, else {@value #SETUP_TIMEOUT_ENV} seconds, else {@link #DEFAULT_SETUP_TIMEOUT}; never longer than
     * {@link #timeout()}.
     */
    public Duration setupTimeout() {
        return setupTimeout;
    }

    /** The property that binds a group to a device ({@link Builder#deviceId}); its value is the device's name. */
    public static final String DEVICE_ID = "deviceId";

    /** Backend-specific settings ({@code tcp.bindHost}, ...). */
    public Map<String, String> properties() {
        return properties;
    }

    /** The environment variables {@code env://} reads ({@link Distributed#environment()} unless set). */
    public Map<String, String> environment() {
        return environment;
    }

    /**
     * The job's secret, which every connection of the group (the store's, the backend's) proves: the builder's,
     * else {@code TENSORBUS_SECRET} or the file {@code TENSORBUS_SECRET_FILE} of {@link #environment()} (which
     * {@code tensorbus launch} sets), else {@link JobSecret#none()}, with which the group listens on loopback
     * addresses only.
     */
    public JobSecret secret() {
        return secret;
    }

    /**
     * Whether this group is one with PyTorch processes ({@code --pytorch-interop}): the {@code tcp://} and
     * {@code env://} store speaks PyTorch's TCPStore wire (rank 0 hosts it, as {@code init_process_group} does), and
     * the group follows PyTorch 1.13's key layout ({@code default_pg/0/...}, the store-based barrier, the sequence
     * number). PyTorch authenticates nothing, so neither the store nor gloo's connections prove the job secret here.
     */
    public boolean pytorchInterop() {
        return pytorchWire != null;
    }

    /** The wire of the job's PyTorch processes ({@link PyTorchWire}), or null when {@link #pytorchInterop()} is off. */
    public PyTorchWire pytorchWire() {
        return pytorchWire;
    }

    private static PyTorchWire wireOf(String version) {
        if (version == null || version.isBlank()) {
            return null;
        }
        try {
            return PyTorchWire.forVersion(version);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(PYTORCH_INTEROP_ENV + " names the PyTorch version of the job's other "
                    + "processes (1.13, 2.4.0): " + e.getMessage(), e);
        }
    }

    /** Builds {@link InitOptions}; every setter checks its argument. */
    public static final class Builder {
        private String backend = "tcp";
        private String initMethod = "env://";
        private int rank = -1;
        private int worldSize = -1;
        private Duration timeout = Distributed.DEFAULT_TIMEOUT;
        private String groupName = "default";
        private Store store;
        private Vertx vertx;
        private final Map<String, String> properties = new HashMap<>();
        private Map<String, String> environment;
        private JobSecret secret;
        private Duration setupTimeout;
        private PyTorchWire pytorchWire;

        private Builder() {
        }

        /** Selects the backend by name; see {@link Distributed#backendNames()}. */
        public Builder backend(String name) {
            this.backend = requireText(name, "backend");
            return this;
        }

        /**
         * {@code env://}, {@code tcp://host:port}, {@code file:///path} or {@code cluster://name}; the last needs a
         * clustered Vert.x through {@link #vertx}.
         */
        public Builder initMethod(String url) {
            this.initMethod = requireText(url, "initMethod");
            return this;
        }

        /** This process's rank, in {@code [0, worldSize)}. */
        public Builder rank(int rank) {
            if (rank < 0) {
                throw new IllegalArgumentException("rank=" + rank + " must be >= 0");
            }
            this.rank = rank;
            return this;
        }

        /** The number of processes, at least 1. */
        public Builder worldSize(int worldSize) {
            if (worldSize < 1) {
                throw new IllegalArgumentException("worldSize=" + worldSize + " must be >= 1");
            }
            this.worldSize = worldSize;
            return this;
        }

        /** The deadline of every operation, and of set-up when it is shorter than {@link #setupTimeout}; positive. */
        public Builder timeout(Duration timeout) {
            Objects.requireNonNull(timeout, "timeout");
            if (timeout.isNegative() || timeout.isZero()) {
                throw new IllegalArgumentException("timeout=" + timeout + " must be positive");
            }
            this.timeout = timeout;
            return this;
        }

        /** The deadline of set-up ({@link InitOptions#setupTimeout()}); positive. */
        public Builder setupTimeout(Duration setupTimeout) {
            Objects.requireNonNull(setupTimeout, "setupTimeout");
            if (setupTimeout.isNegative() || setupTimeout.isZero()) {
                throw new IllegalArgumentException("setupTimeout=" + setupTimeout + " must be positive");
            }
            this.setupTimeout = setupTimeout;
            return this;
        }

        /** The group's name and store prefix; letters, digits and {@code -_.} only. */
        public Builder groupName(String name) {
            requireText(name, "groupName");
            if (!name.matches("[A-Za-z0-9_.-]+")) {
                throw new IllegalArgumentException("groupName '" + name + "' may hold only letters, digits and -_.");
            }
            this.groupName = name;
            return this;
        }

        /** Rendezvous through {@code store} instead of the init method (c10d's {@code store=} argument). */
        public Builder store(Store store) {
            this.store = Objects.requireNonNull(store, "store");
            return this;
        }

        /**
         * Joins a job whose other ranks are PyTorch processes of {@code wire}'s releases
         * ({@link InitOptions#pytorchInterop()}, {@link PyTorchWire#forVersion}); needs the {@code gloo} backend. Off
         * by default, or on when {@value #PYTORCH_INTEROP_ENV} names a version.
         */
        public Builder pytorchInterop(PyTorchWire wire) {
            this.pytorchWire = Objects.requireNonNull(wire, "wire");
            return this;
        }

        /** Runs on {@code vertx} (not closed with the group). */
        public Builder vertx(Vertx vertx) {
            this.vertx = Objects.requireNonNull(vertx, "vertx");
            return this;
        }

        /**
         * Binds the group to {@code device}, as PyTorch's {@code device_id}: a device backend (opencl, nccl) stages
         * the object collectives' bytes through it, and subgroups inherit it. Sets the property {@link #DEVICE_ID}.
         */
        public Builder deviceId(Device device) {
            Objects.requireNonNull(device, "device");
            if (device.isCpu() || device.index() < 0) {
                throw new IllegalArgumentException("deviceId needs an accelerator with an index, such as opencl:0 or "
                        + "cuda:1, got " + device);
            }
            return property(DEVICE_ID, device.toString());
        }

        /** A backend-specific setting. */
        public Builder property(String key, String value) {
            properties.put(requireText(key, "property key"), Objects.requireNonNull(value, "property value"));
            return this;
        }

        /** The variables {@code env://} reads instead of the process environment (for tests and launchers). */
        public Builder environment(Map<String, String> env) {
            this.environment = Map.copyOf(env);
            return this;
        }

        /** The job's secret, instead of the environment's; {@link JobSecret#none()} for none (loopback only). */
        public Builder secret(JobSecret secret) {
            this.secret = Objects.requireNonNull(secret, "secret (JobSecret.none() for none)");
            return this;
        }

        /**
         * The options.
         *
         * @throws IllegalArgumentException when no secret was given and the environment's is unusable (too short,
         *     an unreadable file, or one others may read)
         */
        public InitOptions build() {
            return new InitOptions(this);
        }

        private static String requireText(String s, String what) {
            if (s == null || s.isBlank()) {
                throw new IllegalArgumentException(what + " must not be blank");
            }
            return s;
        }
    }
}
