package io.tensorbus.distributed.rpc;

import io.opentelemetry.api.OpenTelemetry;
import io.tensorbus.c10d.JobSecret;
import io.tensorbus.c10d.Store;
import io.tensorbus.distributed.Distributed;
import io.tensorbus.io.ObjectCodec;
import io.vertx.core.Vertx;
import io.vertx.core.net.KeyCertOptions;
import io.vertx.core.net.TrustOptions;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.Objects;

/**
 * The settings of an RPC agent (PyTorch's {@code RpcBackendOptions}): how workers meet (an init method or
 * a store, as {@code init_process_group}), the default call timeout, the callee's worker threads, the
 * shared secret every connection must prove, optional mutual TLS, limits on what a peer may send, and shared
 * memory between workers of one host.
 * Build with {@link #builder()}.
 */
public final class RpcOptions {
    private static final long DEFAULT_RING_BYTES = 4 << 20;
    private static final long MIN_RING_BYTES = 64 << 10;
    private static final long MAX_RING_BYTES = 1L << 30;
    private final String initMethod;
    private final Store store;
    private final Map<String, String> environment;
    private final Duration timeout;
    private final Duration initTimeout;
    private final String bindHost;
    private final int numWorkerThreads;
    private final JobSecret secret;
    private final int maxMessageBytes;
    private final Vertx vertx;
    private final RpcRegistry registry;
    private final ObjectCodec codec;
    private final KeyCertOptions tlsIdentity;
    private final TrustOptions tlsTrust;
    private final boolean sharedMemory;
    private final Path sharedMemoryDir;
    private final long sharedMemoryRingBytes;
    private final OpenTelemetry openTelemetry;

    private RpcOptions(Builder b) {
        this.initMethod = b.initMethod;
        this.store = b.store;
        this.environment = b.environment;
        this.timeout = b.timeout;
        this.initTimeout = b.initTimeout;
        this.bindHost = b.bindHost;
        this.numWorkerThreads = b.numWorkerThreads;
        this.secret = b.secret != null ? b.secret : JobSecret.fromEnvironment(b.environment);
        this.maxMessageBytes = b.maxMessageBytes;
        this.vertx = b.vertx;
        this.registry = b.registry;
        this.codec = b.codec;
        this.tlsIdentity = b.tlsIdentity;
        this.tlsTrust = b.tlsTrust;
        this.sharedMemory = b.sharedMemory;
        this.sharedMemoryDir = b.sharedMemoryDir;
        this.sharedMemoryRingBytes = b.sharedMemoryRingBytes;
        this.openTelemetry = b.openTelemetry;
    }

    /** A builder with PyTorch's defaults (env:// rendezvous, 60 s timeout, 16 worker threads). */
    public static Builder builder() {
        return new Builder();
    }

    /**
     * The rendezvous URL ({@code env://}, {@code tcp://host:port}, {@code file:///path}, or
     * {@code cluster://<job>} through a clustered {@link #vertx()}); unused with a store.
     */
    public String initMethod() {
        return initMethod;
    }

    /** The store to meet through, or null to create one from {@link #initMethod()}. */
    public Store store() {
        return store;
    }

    /** The environment read for {@code env://} and the secret (the process's by default). */
    public Map<String, String> environment() {
        return environment;
    }

    /** The default timeout of a call. */
    public Duration timeout() {
        return timeout;
    }

    /** How long {@code init} waits for the other workers. */
    public Duration initTimeout() {
        return initTimeout;
    }

    /**
     * The address this worker accepts calls on and tells the others, or null for the rendezvous's choice
     * (loopback for a loopback store, a store given or {@code file://}/{@code cluster://}; all interfaces
     * otherwise).
     */
    public String bindHost() {
        return bindHost;
    }

    /** How many calls from other workers run at once on this one. */
    public int numWorkerThreads() {
        return numWorkerThreads;
    }

    /**
     * The job's secret, which every connection between workers (and to the rendezvous store) proves: the
     * builder's, else {@code TENSORBUS_SECRET} or the file {@code TENSORBUS_SECRET_FILE} of
     * {@link #environment()}, else {@link JobSecret#none()}, with which the worker accepts calls on loopback
     * addresses only.
     */
    public JobSecret secret() {
        return secret;
    }

    /** The largest message a peer may send, in bytes; a larger one closes its connection. */
    public int maxMessageBytes() {
        return maxMessageBytes;
    }

    /** The Vert.x instance to run on, or null to create one (closed at shutdown). */
    public Vertx vertx() {
        return vertx;
    }

    /** The functions this worker serves. */
    public RpcRegistry registry() {
        return registry;
    }

    /** The codec of arguments and results. */
    public ObjectCodec codec() {
        return codec;
    }

    /** Whether connections run over mutual TLS ({@link Builder#tls}); false: plain TCP (the default). */
    public boolean usesTls() {
        return tlsIdentity != null;
    }

    /**
     * A copy of the key and certificate this worker presents to its peers (as server and as client), or
     * null without TLS.
     */
    public KeyCertOptions tlsIdentity() {
        return tlsIdentity == null ? null : tlsIdentity.copy();
    }

    /** A copy of the certificates this worker trusts its peers' certificates by, or null without TLS. */
    public TrustOptions tlsTrust() {
        return tlsTrust == null ? null : tlsTrust.copy();
    }

    /**
     * Whether calls between workers of one host go through shared memory ({@link Builder#sharedMemory}); true
     * by default.
     */
    public boolean sharedMemory() {
        return sharedMemory;
    }

    /** Where shared-memory channel files are made (a tmpfs; {@code /dev/shm} by default). */
    public Path sharedMemoryDir() {
        return sharedMemoryDir;
    }

    /** The capacity of each direction's ring of a shared-memory connection, in bytes (4 MiB by default). */
    public long sharedMemoryRingBytes() {
        return sharedMemoryRingBytes;
    }

    /** The OpenTelemetry that traces this agent's calls ({@link Builder#openTelemetry}), or null: none are traced. */
    public OpenTelemetry openTelemetry() {
        return openTelemetry;
    }

    /** The settings of {@link RpcOptions}. */
    public static final class Builder {
        private String initMethod = "env://";
        private Store store;
        private Map<String, String> environment = Distributed.environment();
        private Duration timeout = Duration.ofSeconds(60);
        private Duration initTimeout = Duration.ofMinutes(5);
        private String bindHost;
        private int numWorkerThreads = 16;
        private JobSecret secret;
        private int maxMessageBytes = Integer.MAX_VALUE - 64;
        private Vertx vertx;
        private RpcRegistry registry = RpcRegistry.global();
        private ObjectCodec codec = ObjectCodec.standard();
        private KeyCertOptions tlsIdentity;
        private TrustOptions tlsTrust;
        private boolean sharedMemory = !"false".equals(System.getProperty("tensorbus.rpc.sharedMemory"));
        private Path sharedMemoryDir = Path.of(System.getProperty("tensorbus.rpc.sharedMemoryDir", "/dev/shm"));
        private long sharedMemoryRingBytes = DEFAULT_RING_BYTES;
        private OpenTelemetry openTelemetry;

        private Builder() {
        }

        /**
         * The rendezvous URL: {@code env://} (default), {@code tcp://host:port}, {@code file:///path}, or
         * {@code cluster://<job>} to meet through the Vert.x cluster of the {@link #vertx(Vertx) Vert.x} given
         * (see {@code HazelcastCluster}); there, a worker whose node leaves the cluster is lost.
         */
        public Builder initMethod(String url) {
            this.initMethod = Objects.requireNonNull(url, "initMethod");
            return this;
        }

        /** Meet through this store instead of an init method (its keys go under {@code rpc/}). */
        public Builder store(Store store) {
            this.store = Objects.requireNonNull(store, "store");
            return this;
        }

        /** The environment to read instead of the process's (tests, embedding). */
        public Builder environment(Map<String, String> env) {
            this.environment = Map.copyOf(Objects.requireNonNull(env, "environment"));
            return this;
        }

        /**
         * The default call timeout.
         *
         * @throws IllegalArgumentException outside 1 ms to 365 days
         */
        public Builder timeout(Duration timeout) {
            this.timeout = positive(timeout, "timeout");
            return this;
        }

        /**
         * How long init waits for every worker, and graceful shutdown for every worker to finish.
         *
         * @throws IllegalArgumentException outside 1 ms to 365 days
         */
        public Builder initTimeout(Duration timeout) {
            this.initTimeout = positive(timeout, "initTimeout");
            return this;
        }

        /**
         * Accept calls on {@code host} and tell the other workers to call there: on a job across several
         * machines, this machine's address that the others can reach.
         *
         * @throws IllegalArgumentException for a blank host
         * @throws NullPointerException when {@code host} is null
         */
        public Builder bindHost(String host) {
            Objects.requireNonNull(host, "host");
            if (host.isBlank()) {
                throw new IllegalArgumentException("bindHost must not be blank");
            }
            this.bindHost = host;
            return this;
        }

        /**
         * Calls that may run at once on this worker (each on its own virtual thread).
         *
         * @throws IllegalArgumentException outside 1 to 65536
         */
        public Builder numWorkerThreads(int n) {
            if (n < 1 || n > 65536) {
                throw new IllegalArgumentException("numWorkerThreads must be from 1 to 65536, got " + n);
            }
            this.numWorkerThreads = n;
            return this;
        }

        /**
         * The secret every worker of the job shares, instead of the environment's: each connection proves it
         * ({@code SecretHandshake}) before any call is read. {@link JobSecret#none()} for none (loopback only).
         */
        public Builder secret(JobSecret secret) {
            this.secret = Objects.requireNonNull(secret, "secret (JobSecret.none() for none)");
            return this;
        }

        /**
         * The largest message accepted from a peer, in bytes (default about 2 GiB).
         *
         * @throws IllegalArgumentException below 1024
         */
        public Builder maxMessageBytes(int bytes) {
            if (bytes < 1024) {
                throw new IllegalArgumentException("maxMessageBytes must be at least 1024, got " + bytes);
            }
            this.maxMessageBytes = bytes;
            return this;
        }

        /** Run on this Vert.x instance (not closed at shutdown). */
        public Builder vertx(Vertx vertx) {
            this.vertx = Objects.requireNonNull(vertx, "vertx");
            return this;
        }

        /** Serve the functions of this registry (default {@link RpcRegistry#global()}). */
        public Builder registry(RpcRegistry registry) {
            this.registry = Objects.requireNonNull(registry, "registry");
            return this;
        }

        /** Encode arguments and results with this codec (default {@link ObjectCodec#standard()}). */
        public Builder codec(ObjectCodec codec) {
            this.codec = Objects.requireNonNull(codec, "codec");
            return this;
        }

        /**
         * Runs every connection over mutual TLS: this worker presents {@code identity} when it accepts a
         * call's connection and when it opens one, and requires the peer's certificate to be trusted by
         * {@code trust} both ways (the accepting side requires a client certificate). Host names are not
         * verified, since workers are addressed by the IP they publish at rendezvous: trust rests on the
         * certificates given alone, so {@code trust} should hold only the job's own certificates (or its
         * private CA). The shared-secret proof still runs inside TLS. Every worker of a job must use TLS or
         * none: a worker with TLS and one without refuse each other. The options are copied.
         *
         * @throws NullPointerException when {@code identity} or {@code trust} is null (naming it)
         */
        public Builder tls(KeyCertOptions identity, TrustOptions trust) {
            Objects.requireNonNull(identity, "identity");
            Objects.requireNonNull(trust, "trust");
            this.tlsIdentity = identity.copy();
            this.tlsTrust = trust.copy();
            return this;
        }

        /**
         * The options.
         *
         * @throws IllegalArgumentException when no secret was given and the environment's is unusable (too short,
         *     an unreadable file, or one others may read)
         */
        public RpcOptions build() {
            return new RpcOptions(this);
        }

        /**
         * Whether a connection to a worker on this host goes through shared memory (TensorPipe's {@code shm}
         * transport): a pair of rings in a {@code /dev/shm} file both map, deleted as soon as both have it,
         * with the socket kept as doorbell and sign of life. On by default (the system property
         * {@code tensorbus.rpc.sharedMemory=false} turns the default off); a worker that cannot make or map the
         * file stays on TCP and logs why once.
         */
        public Builder sharedMemory(boolean enabled) {
            this.sharedMemory = enabled;
            return this;
        }

        /**
         * Where channel files are made: a tmpfs ({@code /dev/shm} by default, or the system property
         * {@code tensorbus.rpc.sharedMemoryDir}).
         *
         * @throws NullPointerException when {@code dir} is null
         */
        public Builder sharedMemoryDir(Path dir) {
            this.sharedMemoryDir = Objects.requireNonNull(dir, "sharedMemoryDir");
            return this;
        }

        /**
         * The capacity of each direction's ring, in bytes: a power of two from 64 KiB to 1 GiB (4 MiB by
         * default). A message larger than the free room is copied aside and follows as room appears.
         *
         * @throws IllegalArgumentException for any other value
         */
        public Builder sharedMemoryRingBytes(long bytes) {
            if (Long.bitCount(bytes) != 1 || bytes < MIN_RING_BYTES || bytes > MAX_RING_BYTES) {
                throw new IllegalArgumentException("sharedMemoryRingBytes must be a power of two from "
                        + MIN_RING_BYTES + " to " + MAX_RING_BYTES + ", got " + bytes);
            }
            this.sharedMemoryRingBytes = bytes;
            return this;
        }

        /**
         * Traces this agent's calls with {@code otel} (the application's SDK, or {@code GlobalOpenTelemetry.get()}):
         * each call of a user function is a client span, child of the caller's current span, whose context travels
         * with the call, and the callee runs the function in a server span, its child. Off (null) by default.
         */
        public Builder openTelemetry(OpenTelemetry otel) {
            this.openTelemetry = otel;
            return this;
        }

        private static Duration positive(Duration d, String what) {
            try {
                return RpcChecks.timeout(d);
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException(what + ": " + e.getMessage(), e);
            }
        }
    }
}
