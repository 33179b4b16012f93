package io.tensorbus.distributed;

import io.tensorbus.c10d.JobSecret;
import io.tensorbus.c10d.Store;
import io.tensorbus.distributed.impl.PyTorchJoin;
import io.tensorbus.distributed.impl.Rendezvous;
import io.tensorbus.distributed.impl.SetupWatch;
import io.tensorbus.internal.distributed.ProcessExit;
import io.tensorbus.internal.distributed.RankEnvironment;
import io.tensorbus.internal.distributed.TimelineClock;
import io.tensorbus.internal.distributed.TimelineRecorder;
import io.tensorbus.internal.distributed.VertxMeters;
import io.tensorbus.spi.Backend;
import io.tensorbus.spi.BackendOptions;
import io.tensorbus.spi.BackendProvider;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Function;
import java.util.function.UnaryOperator;
import java.util.stream.IntStream;

/**
 * The entry points of {@code torch.distributed}: {@link #initProcessGroup} creates the default group of
 * this process, {@link #spawn} runs a small world as threads of this JVM (tests, examples), and
 * {@link #backendNames()} lists the backends the class path provides.
 */
public final class Distributed {
    /**
     * How long a group's operations and a store's waits take before they fail when no timeout is given: 30 minutes,
     * as {@code torch.distributed.default_pg_timeout}. The one default of every group and store here.
     */
    public static final Duration DEFAULT_TIMEOUT = Duration.ofMinutes(30);

    private Distributed() {
    }

    /**
     * {@code init_process_group}: rendezvous with the other processes through the init method (or the
     * store) of {@code options}, then connect through the named backend. Completes with the default group;
     * fails within {@link InitOptions#timeout()} when processes are missing or disagree (world size, a rank
     * taken twice).
     */
    public static Future<ProcessGroup> initProcessGroup(InitOptions options) {
        return initProcessGroup(options, true);
    }

    /** Initialises a group; {@code processDefault}: it may become the process's default group. */
    private static Future<ProcessGroup> initProcessGroup(InitOptions options, boolean processDefault) {
        if (options == null) {
            throw new NullPointerException("options");
        }
        BackendProvider provider = BackendProvider.named(options.backend());
        Future<?> metrics = processDefault ? MetricsPort.start(options) : null;
        Future<ProcessGroup> group = connect(options, provider, processDefault);
        return metrics == null ? group : then(group, pg -> metrics);
    }

    /**
     * {@code made} once {@code step} of its group succeeded too; when the step fails, the group is destroyed and the
     * step's failure is the cause.
     */
    private static Future<ProcessGroup> then(Future<ProcessGroup> made, Function<ProcessGroup, Future<?>> step) {
        return made.compose(pg -> step.apply(pg).transform(m -> m.succeeded() ? Future.succeededFuture(pg)
                : pg.destroy().transform(d -> Future.failedFuture(m.cause()))));
    }

    /** Rendezvous and the backend's connections of a new group. */
    private static Future<ProcessGroup> connect(InitOptions options, BackendProvider provider,
                                                boolean processDefault) {
        Vertx vertx = options.vertx() != null ? options.vertx() : newVertx();
        boolean ownsVertx = options.vertx() == null;
        Object scope = RankEnvironment.scope();
        return Rendezvous.resolve(options, vertx)
                .compose(rv -> join(options, provider, rv, vertx, ownsVertx, processDefault, scope))
                .onFailure(e -> {
                    if (ownsVertx) {
                        vertx.close();
                    }
                });
    }

    /**
     * The group of this rank once the rendezvous {@code rv} is done: the backend's connections, then, when the rank
     * keeps a timeline, its clock measured against rank 0's.
     */
    private static Future<ProcessGroup> join(InitOptions options, BackendProvider provider, Rendezvous rv,
                                             Vertx vertx, boolean ownsVertx, boolean processDefault, Object scope) {
        Store job = options.pytorchInterop() ? PyTorchJoin.jobStore(rv.store(), options.store() == null) : null;
        Store scoped = job != null ? PyTorchJoin.groupStore(job, options.pytorchWire())
                : new PrefixStore(options.groupName(), rv.store());
        Map<String, String> props = backendProperties(options, rv);
        int[] ranks = IntStream.range(0, rv.worldSize()).toArray();
        BackendOptions bo = new BackendOptions(rv.rank(), rv.worldSize(), scoped, options.timeout(),
                options.groupName(), ranks, vertx, props, options.secret());
        TimelineRecorder timeline = TimelineRecorder.open(options.environment(), rv.rank());
        Runnable release = release(timeline, options.store() == null ? rv.store() : null, ownsVertx ? vertx : null);
        String who = "rank " + rv.rank() + " (" + rv.advertiseHost() + ")";
        String what = "group '" + options.groupName() + "'";
        Future<ProcessGroup> made = SetupWatch.run(vertx, scoped, options.groupName(), what, who,
                        options.setupTimeout(), () -> provider.create(bo), Backend::close)
                .map(b -> {
                    ProcessGroup pg = new ProcessGroup(b, options.groupName(), ranks, rv.rank(), scoped, vertx,
                            options.timeout(), Map.copyOf(props), options.secret(), release);
                    pg.closeAtExit();
                    if (job != null) {
                        pg.joinedPyTorchJob(job);
                    }
                    if (processDefault) {
                        DefaultGroups.initialised(scope, pg);
                    }
                    return pg;
                })
                .onFailure(e -> release.run());
        if (job != null) {
            made = then(made, pg -> PyTorchJoin.afterBackend(vertx, job, options.pytorchWire(), 1,
                    rv.rank(), rv.worldSize(), options.setupTimeout()));
        }
        return timeline == null ? made : then(made, pg -> TimelineClock.sync(scoped, rv.rank(), rv.worldSize(),
                timeline, options.setupTimeout()));
    }

    /** The backend's properties: the options' own, and where to bind, what to advertise, how long set-up may take. */
    private static Map<String, String> backendProperties(InitOptions options, Rendezvous rv) {
        Map<String, String> props = new HashMap<>(options.properties());
        props.putIfAbsent("tcp.bindHost", rv.bindHost());
        props.putIfAbsent(Rendezvous.ADVERTISE_HOST, rv.advertiseHost());
        props.putIfAbsent(BackendOptions.SETUP_TIMEOUT_MILLIS, Long.toString(options.setupTimeout().toMillis()));
        if (options.pytorchInterop()) {
            props.put(PyTorchJoin.INTEROP_PROPERTY, options.pytorchWire().name());
        }
        return props;
    }

    /** What a group releases when it is destroyed or fails to start: its timeline, and the store and Vert.x it made. */
    private static Runnable release(TimelineRecorder timeline, Store ownStore, Vertx ownVertx) {
        return () -> {
            if (timeline != null) {
                timeline.close();
            }
            if (ownStore != null) {
                ownStore.close();
            }
            if (ownVertx != null) {
                ownVertx.close();
            }
        };
    }

    /**
     * {@code is_initialized}: true when {@link #defaultGroup()} has a group to return (on a {@link #spawn} rank's
     * thread, or after {@link #initProcessGroup} in this process and before that group is destroyed).
     */
    public static boolean isInitialized() {
        return DefaultGroups.current() != null;
    }

    /**
     * The default group ({@code group=None} in torch.distributed): on a {@link #spawn} rank's thread, that rank's
     * group; elsewhere the first group {@link #initProcessGroup} made in this process (on a rank that runs as a
     * thread, {@code --ranks-as-threads}: made by that rank), until it is destroyed.
     *
     * @throws IllegalStateException when there is none
     */
    public static ProcessGroup defaultGroup() {
        ProcessGroup g = DefaultGroups.current();
        if (g == null) {
            throw new IllegalStateException("no default process group: call Distributed.initProcessGroup first");
        }
        return g;
    }

    /**
     * {@code new_group(ranks)}: a group of the given global ranks of {@code parent}, with its own connections and
     * {@code parent}'s timeout and backend. Every member of {@code parent} must call it, in the same order as its
     * other group creations; processes outside {@code ranks} get a handle whose {@link ProcessGroup#isMember()} is
     * false. On a process outside {@code parent}, the future fails.
     *
     * @throws IllegalArgumentException when a rank is not a member of {@code parent} or appears twice
     */
    public static Future<ProcessGroup> newGroup(ProcessGroup parent, int... ranks) {
        return GroupCreation.newGroup(parent, ranks, null, null);
    }

    /**
     * {@code new_group(ranks, timeout, backend)}: as {@link #newGroup(ProcessGroup, int...)}, with the subgroup's
     * own {@code timeout} for its operations and the {@code backend} it runs on (null for {@code parent}'s).
     *
     * @throws IllegalArgumentException when a rank is not a member or appears twice, the timeout is not positive,
     *                                  or no backend plugin has that name
     */
    public static Future<ProcessGroup> newGroup(ProcessGroup parent, int[] ranks, Duration timeout, String backend) {
        return GroupCreation.newGroup(parent, ranks, timeout, backend);
    }

    /**
     * {@code new_subgroups(group_size)}: splits {@code parent} into subgroups of {@code groupSize} consecutive ranks
     * (a node's ranks, say); every member must call it. Completes with every subgroup and this process's own.
     *
     * @throws IllegalArgumentException when {@code groupSize} is below 1 or does not divide the group's size
     */
    public static Future<Subgroups> newSubgroups(ProcessGroup parent, int groupSize) {
        return GroupCreation.newSubgroups(parent, groupSize);
    }

    /**
     * {@code new_subgroups_by_enumeration}: one subgroup of {@code parent} per list of global ranks, created in list
     * order; every member must call it with the same lists. A rank may be in at most one list; a process in none
     * has no current subgroup.
     *
     * @throws IllegalArgumentException when a list is empty, names a rank that is not a member or appears twice,
     *                                  or a rank is in two lists
     */
    public static Future<Subgroups> newSubgroupsByEnumeration(ProcessGroup parent, List<int[]> ranksPerSubgroup) {
        return GroupCreation.newSubgroupsByEnumeration(parent, ranksPerSubgroup);
    }

    /**
     * {@code split_group}: splits {@code parent} into disjoint subgroups, each a list of its group ranks (as
     * PyTorch's {@code split_ranks}); every member must call it. Completes with the subgroup this process is in,
     * or empty.
     *
     * @throws IllegalArgumentException as {@link #newSubgroupsByEnumeration} does, or for a rank outside the group
     */
    public static Future<Optional<ProcessGroup>> splitGroup(ProcessGroup parent, List<int[]> splitRanks) {
        return GroupCreation.splitGroup(parent, splitRanks);
    }

    /**
     * {@code get_node_local_rank}: this process's rank among the processes of its machine, as the launcher sets
     * it in {@code LOCAL_RANK}.
     *
     * @throws IllegalStateException when {@code LOCAL_RANK} is not set
     * @throws IllegalArgumentException when it is not a non-negative integer
     */
    public static int getNodeLocalRank() {
        int rank = nodeLocalRank(environment().get("LOCAL_RANK"));
        if (rank < 0) {
            throw new IllegalStateException("LOCAL_RANK is not set: start the process with `tensorbus launch`, or "
                    + "use getNodeLocalRank(fallbackRank)");
        }
        return rank;
    }

    /** {@link #getNodeLocalRank()}, or {@code fallbackRank} when {@code LOCAL_RANK} is not set. */
    public static int getNodeLocalRank(int fallbackRank) {
        int rank = nodeLocalRank(environment().get("LOCAL_RANK"));
        return rank < 0 ? fallbackRank : rank;
    }

    /**
     * The environment variables {@code env://} and {@link #getNodeLocalRank()} read: the process's, or on a rank
     * that runs as a thread ({@code tensorbus launch --ranks-as-threads}) and the threads it started, that rank's
     * ({@code RANK}, {@code LOCAL_RANK} of its own). Read {@code RANK} here rather than from {@link System#getenv()} in
     * a program that may run so.
     */
    public static Map<String, String> environment() {
        return RankEnvironment.current();
    }

    /** The rank in a {@code LOCAL_RANK} value, or -1 when there is none. */
    static int nodeLocalRank(String value) {
        if (value == null || value.isBlank()) {
            return -1;
        }
        try {
            int rank = Integer.parseInt(value.trim());
            if (rank >= 0) {
                return rank;
            }
        } catch (NumberFormatException e) {
            // reported below
        }
        throw new IllegalArgumentException("LOCAL_RANK='" + value + "' is not a non-negative integer");
    }

    /** The names of the backends on the class path (available or not). */
    public static List<String> backendNames() {
        return BackendProvider.all().stream().map(BackendProvider::name).toList();
    }

    /**
     * A Vert.x instance with the native transport preferred (epoll: zero-copy writes from off-heap tensors) and
     * daemon threads, so that it never keeps a JVM alive after the program ends: the groups and agents built on
     * it are closed at exit with a warning if the program left them open, as PyTorch does. While metrics are on
     * and {@code io.vertx:vertx-micrometer-metrics} is on the class path, it reports Vert.x's own metrics (net,
     * event bus, pools) to the bound registries too.
     */
    public static Vertx newVertx() {
        ProcessExit.install();
        return VertxMeters.builder(new VertxOptions().setPreferNativeTransport(true).setUseDaemonThread(true)).build();
    }

    /** The body of one rank in {@link #spawn}. */
    @FunctionalInterface
    public interface RankMain {
        /** Runs rank {@code group.rank()}; may block (it has its own thread). */
        void run(ProcessGroup group) throws Exception;
    }

    /** {@link #spawn(int, Duration, RankMain)} with the tcp backend and a 2-minute deadline. */
    public static void spawn(int worldSize, RankMain body) {
        spawn(worldSize, Duration.ofMinutes(2), body);
    }

    /**
     * {@code torch.multiprocessing.spawn} with threads: runs {@code body} for ranks 0 to worldSize-1, each on
     * its own thread with its own default group (tcp backend, loopback, one shared in-JVM store and Vert.x) and its
     * own {@link #environment()} ({@code RANK}, {@code LOCAL_RANK}, {@code WORLD_SIZE} as a launcher sets them),
     * and returns when all finish. When a rank fails, the others' groups are closed so that they fail
     * fast; the first failure is rethrown naming its rank.
     *
     * @param deadline how long the whole run may take; also every operation's timeout
     * @throws IllegalStateException naming the failed rank, or the ranks still running at the deadline
     */
    public static void spawn(int worldSize, Duration deadline, RankMain body) {
        spawn(worldSize, deadline, b -> b, body);
    }

    /**
     * {@link #spawn(int, Duration, RankMain)} with each rank's options adjusted by {@code options} before its group
     * starts: another backend, a bound device ({@code b -> b.backend("opencl").deviceId(Device.opencl(0))}).
     *
     * @throws IllegalStateException naming the failed rank, or the ranks still running at the deadline
     */
    public static void spawn(int worldSize, Duration deadline, UnaryOperator<InitOptions.Builder> options,
            RankMain body) {
        Objects.requireNonNull(options, "options");
        if (worldSize < 1) {
            throw new IllegalArgumentException("worldSize=" + worldSize + " must be at least 1");
        }
        Vertx vertx = newVertx();
        HashStore store = new HashStore(deadline);
        // The ranks share this JVM, so they share a fresh secret: their mesh is authenticated like a launched job's.
        JobSecret secret = JobSecret.random();
        List<ProcessGroup> groups = Collections.synchronizedList(new ArrayList<>());
        ExecutorService threads = Executors.newFixedThreadPool(worldSize, r -> {
            Thread t = new Thread(r);
            t.setDaemon(true);
            return t;
        });
        try {
            List<java.util.concurrent.Future<?>> ranks = new ArrayList<>(); // qualified: clashes with Future
            for (int r = 0; r < worldSize; r++) {
                int rank = r;
                ranks.add(threads.submit(() -> RankEnvironment.call(spawnedEnvironment(rank, worldSize), () -> {
                    Thread.currentThread().setName("rank-" + rank);
                    InitOptions o = options.apply(InitOptions.builder().rank(rank).worldSize(worldSize).store(store)
                            .vertx(vertx).timeout(deadline).secret(secret)).build();
                    // A rank's group is its thread's default, not the process's: the ranks stand for processes.
                    ProcessGroup pg = initProcessGroup(o, false).toCompletionStage().toCompletableFuture()
                            .get(deadline.toMillis(), TimeUnit.MILLISECONDS);
                    groups.add(pg);
                    try {
                        DefaultGroups.runAs(pg, body);
                    } finally {
                        // Waited for, so that what closes with the group (its timeline) is done when spawn returns.
                        pg.destroy().toCompletionStage().toCompletableFuture().handle((v, e) -> null)
                                .get(10, TimeUnit.SECONDS);
                    }
                    return null;
                })));
            }
            join(ranks, deadline, groups);
        } finally {
            threads.shutdownNow();
            vertx.close();
        }
    }

    /** What {@link #environment()} gives a {@link #spawn} rank: the process's, with the rank's place in the world. */
    private static Map<String, String> spawnedEnvironment(int rank, int worldSize) {
        Map<String, String> env = new HashMap<>(System.getenv());
        for (String name : List.of("RANK", "LOCAL_RANK")) {
            env.put(name, Integer.toString(rank));
        }
        for (String name : List.of("WORLD_SIZE", "LOCAL_WORLD_SIZE")) {
            env.put(name, Integer.toString(worldSize));
        }
        env.put("GROUP_RANK", "0");
        return env;
    }

    // qualified: clashes with Future
    private static void join(List<java.util.concurrent.Future<?>> ranks, Duration deadline, List<ProcessGroup> groups) {
        long end = System.nanoTime() + deadline.toNanos();
        RuntimeException first = null;
        for (int r = 0; r < ranks.size(); r++) {
            try {
                ranks.get(r).get(Math.max(0, end - System.nanoTime()), TimeUnit.NANOSECONDS);
            } catch (ExecutionException e) {
                if (first == null) {
                    first = new IllegalStateException("rank " + r + " failed: " + e.getCause(), e.getCause());
                    new ArrayList<>(groups).forEach(ProcessGroup::destroy);
                }
            } catch (TimeoutException e) {
                List<Integer> running = new ArrayList<>();
                for (int k = 0; k < ranks.size(); k++) {
                    if (!ranks.get(k).isDone()) {
                        running.add(k);
                    }
                }
                new ArrayList<>(groups).forEach(ProcessGroup::destroy);
                throw first != null ? first : new IllegalStateException("ranks " + running + " still ran after "
                        + deadline);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted while waiting for the ranks", e);
            }
        }
        if (first != null) {
            throw first;
        }
    }
}
