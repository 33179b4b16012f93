package io.tensorbus.workloads.cli;

import io.tensorbus.c10d.JobSecret;
import io.tensorbus.distributed.Distributed;
import io.tensorbus.distributed.InitOptions;
import io.tensorbus.internal.distributed.ProcessExit;
import io.tensorbus.internal.distributed.AdvertisedHost;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

/**
 * {@code tensorbus launch}: torchrun's job for the JVM. Starts {@code --nproc-per-node} child JVMs with this
 * JVM's java executable and class path, each told its place in the job through the environment variables
 * {@code RANK}, {@code LOCAL_RANK}, {@code WORLD_SIZE}, {@code LOCAL_WORLD_SIZE}, {@code GROUP_RANK},
 * {@code MASTER_ADDR} and {@code MASTER_PORT}, forwards their output with a {@code [rank R] } prefix, and
 * exits with 0 when all of them do.
 *
 * <p>For a one-node job without {@code --master-port} the launcher hosts the rendezvous {@code TcpStore}
 * itself on a free port and sets {@code TENSORBUS_STORE_HOSTED=1}, so that rank 0 connects as a client like
 * the others (torchrun's agent store): no port is chosen twice and none can be taken between choosing and
 * binding. When a child exits with a non-zero status the others are stopped (SIGTERM, then SIGKILL after
 * {@link #GRACE}) and the launcher exits with that status and the exception that ended the rank's {@code main}
 * (written to {@code TENSORBUS_ERROR_FILE}); {@code --timeout} and Ctrl-C stop them too.
 *
 * <p>Every child gets the job's secret ({@code TENSORBUS_SECRET}, a new random one for a one-node job unless
 * the environment has one; several nodes must share one) and this launcher's pid, so that a child whose
 * launcher dies ends too and a job across nodes ends on every node ({@link ProcessExit}).
 *
 * <p>With several nodes ({@code --nnodes N --node-rank K}), node 0's launcher hosts the job's store on the master
 * port and the launchers watch each other through it ({@link LauncherGroup}): a rank failing on any node, or a
 * launcher gone quiet, ends every node's ranks. With {@code --nnodes MIN:MAX} and {@code --rdzv-*} the launcher is
 * torchrun's elastic agent: it meets the others in rounds of a {@link DynamicRendezvous} and restarts its ranks with
 * the new world size when a rank fails, a node is lost or a node asks to join ({@code docs/multi-host.md}).
 */
public final class Launcher {
    /** The exit status when {@code --timeout} ran out, as timeout(1). */
    public static final int TIMEOUT_EXIT = 124;

    /** The exit status when the launcher was interrupted, as a shell after SIGINT. */
    public static final int INTERRUPTED_EXIT = 130;

    /** How long children get to stop after SIGTERM before they are killed. */
    public static final Duration GRACE = Duration.ofSeconds(5);

    /** How long the forwarders get to pass on the last lines of a process that ended, in milliseconds. */
    private static final long DRAIN_MILLIS = 2000;

    /** The options; for an elastic job, those of the round running (its nodes, this node's rank, its store). */
    private LaunchOptions options;
    private final PrintStream out;
    private final PrintStream err;
    private final List<LaunchedRank> ranks = new CopyOnWriteArrayList<>();
    /** Set by the shutdown hook, so that the children it stops are not reported as failures. */
    private volatile boolean shuttingDown;
    /** When this attempt began to stop its ranks, in epoch milliseconds; what fails later is a consequence. */
    private volatile long stoppingSince = Long.MAX_VALUE;
    /** Every child's command line. */
    private List<String> command;
    /** The environment the launcher reads its own settings from (the process's, or a test's). */
    private Map<String, String> env;
    /** What the launcher adds to every child's environment. */
    private Map<String, String> jobEnv;
    /** Where the children write the exception that ended their {@code main}. */
    private Path errors;
    /** When {@code --timeout} runs out ({@link System#nanoTime()}), over every restart. */
    private long deadline;
    /** The launchers of the other nodes, for a job of several nodes; null for one node. */
    private volatile JobPeers peers;

    private Launcher(LaunchOptions options, PrintStream out, PrintStream err) {
        this.options = options;
        this.out = out;
        this.err = err;
    }

    /** Runs {@code tensorbus launch} with {@code args} (the options after {@code launch}) and exits with its status. */
    public static void main(String[] args) {
        System.exit(run(List.of(args), System.out, System.err));
    }

    /**
     * Runs a job to its end; callable in-process (the tests do).
     *
     * @param args the options, TARGET and its arguments, as after {@code tensorbus launch}
     * @param out where the children's stdout goes, each line prefixed with {@code [rank R] }
     * @param err where their stderr goes (prefixed too), and the launcher's own messages
     * @return 0 when every child exited with 0; the status of the first child that failed; 2 for bad
     *     options; {@link #TIMEOUT_EXIT} when {@code --timeout} ran out; 1 when a child or the store could not
     *     be started; {@link #INTERRUPTED_EXIT} when the calling thread was interrupted
     */
    public static int run(List<String> args, PrintStream out, PrintStream err) {
        return run(args, System.getenv(), out, err);
    }

    /**
     * {@link #run(List, PrintStream, PrintStream)} reading {@code CLASSPATH} and the job's secret from
     * {@code env} instead of the process environment; the children inherit the process environment plus what
     * the launcher sets.
     */
    static int run(List<String> args, Map<String, String> env, PrintStream out, PrintStream err) {
        LaunchOptions o;
        LaunchTarget target;
        Map<String, String> jobEnv;
        try {
            o = LaunchOptions.parse(args);
            if (o.help()) {
                out.println(LaunchOptions.usage());
                return 0;
            }
            target = LaunchTarget.resolve(o, env);
            jobEnv = jobEnvironment(o, env);
        } catch (IllegalArgumentException e) {
            return usage(err, e.getMessage());
        }
        Launcher launcher = new Launcher(o, out, err);
        try {
            launcher.command = LaunchedRank.command(o, target);
        } catch (IllegalArgumentException e) {
            return usage(err, e.getMessage());
        }
        launcher.jobEnv = jobEnv;
        launcher.env = env;
        return launcher.launch();
    }

    /**
     * What every child's environment gets besides its rank: this launcher's pid (a rank ends when its launcher
     * is gone) and the job's secret. A one-node job without {@code TENSORBUS_SECRET} or
     * {@code TENSORBUS_SECRET_FILE} gets a new random one; a job of several nodes must share one.
     *
     * @throws IllegalArgumentException when the secret is unusable, or missing for several nodes
     */
    static Map<String, String> jobEnvironment(LaunchOptions o, Map<String, String> env) {
        JobSecret given = JobSecret.fromEnvironment(env);
        Map<String, String> jobEnv = new HashMap<>();
        jobEnv.put(ProcessExit.LAUNCHER_PID_ENV, Long.toString(ProcessHandle.current().pid()));
        if (given.isPresent()) {
            String text = env.get(JobSecret.ENV);
            jobEnv.put(text != null && !text.isBlank() ? JobSecret.ENV : JobSecret.FILE_ENV,
                    text != null && !text.isBlank() ? text : env.get(JobSecret.FILE_ENV));
        } else if (o.nnodes() > 1) {
            throw new IllegalArgumentException("a job of " + o.nnodes() + " nodes needs the same secret on every"
                    + " node, and " + JobSecret.ENV + " and " + JobSecret.FILE_ENV + " are not set: "
                    + JobSecret.HOW_TO);
        } else {
            jobEnv.put(JobSecret.ENV, JobSecret.newSecretText());
        }
        return jobEnv;
    }

    /** The job's secret as the children will read it. */
    private JobSecret secret() {
        return JobSecret.fromEnvironment(jobEnv);
    }

    private int launch() {
        try {
            errors = Files.createTempDirectory("tensorbus-launch-");
        } catch (IOException e) {
            err.println("tensorbus launch: cannot make a temporary directory for the ranks' error files: " + e);
            return 1;
        }
        Thread hook = new Thread(this::shutDown, "tensorbus-launch-shutdown");
        Runtime.getRuntime().addShutdownHook(hook);
        deadline = options.timeout() == null ? Long.MAX_VALUE : System.nanoTime() + options.timeout().toNanos();
        try {
            return options.elastic() != null ? launchElastic() : options.nnodes() > 1 ? launchWithPeers() : attempts();
        } finally {
            deleteErrors();
            removeHook(hook);
        }
    }

    /**
     * A job of several nodes: node 0's launcher hosts the job's store on the master port, every launcher meets
     * the others there ({@link LauncherGroup}) before it starts its ranks, and a failure or a lost launcher on any
     * node ends the ranks of every node.
     */
    private int launchWithPeers() {
        String where = options.masterAddr() + ":" + options.masterPort();
        String address;
        Duration setup;
        try {
            setup = InitOptions.setupTimeoutOf(env);
            address = AdvertisedHost.choose(options.localAddr(), env, "0.0.0.0", options.masterAddr(),
                    "the launcher of node " + options.nodeRank());
        } catch (IllegalArgumentException | IllegalStateException e) {
            err.println("tensorbus launch: " + e.getMessage());
            return 1;
        }
        try (LaunchStore store = jobStore(setup)) {
            if (store == null) {
                return 1;
            }
            try (LauncherGroup group = LauncherGroup.join(store.store(), options.nnodes(), options.nodeRank(),
                    address, where, setup)) {
                peers = group;
                Exit exit = attempt(0, options.masterPort());
                group.ended();
                if (options.nodeRank() == 0) {
                    // The others need the store for as long as their ranks run.
                    group.awaitOthersEnded(deadline);
                }
                return report(exit);
            } catch (IllegalStateException e) {
                err.println("tensorbus launch: failed: " + e.getMessage());
                return 1;
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return INTERRUPTED_EXIT;
            }
        }
    }

    /**
     * An elastic job, torchrun's agent: meets the other nodes in rounds of the rendezvous ({@link DynamicRendezvous}),
     * runs this node's ranks of each round with their ranks and world size, and when a rank fails (a restart, while
     * {@code --max-restarts} allows), a node is lost or a node asks to join, stops them and meets the others in the
     * next round. Node rank 0 of each round hosts the store the round's ranks meet at.
     */
    private int launchElastic() {
        ElasticOptions e = options.elastic();
        LaunchOptions base = options;
        String address;
        try {
            address = AdvertisedHost.choose(options.localAddr(), env, "0.0.0.0", e.endpoint().host(),
                    "this node's launcher");
        } catch (IllegalStateException ex) {
            err.println("tensorbus launch: " + ex.getMessage());
            return 1;
        }
        RendezvousBackend backend;
        try {
            backend = RendezvousBackend.open(e, address, secret(), storeTimeout());
        } catch (Exception ex) {
            err.println("tensorbus launch: failed: cannot open the rendezvous (" + e.backend() + " at "
                    + e.endpoints() + "): " + ex.getMessage());
            return 1;
        }
        try (backend) {
            DynamicRendezvous rdzv = new DynamicRendezvous(backend.store(), backend.calls(), e, address + "/"
                    + ProcessHandle.current().pid());
            err.println("tensorbus launch: elastic job '" + e.runId() + "' (" + e.minNodes() + " to " + e.maxNodes()
                    + " nodes), this node " + rdzv.node() + "; rendezvous in " + backend.description());
            return new ElasticRun(base, rdzv, address).run();
        } catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
            err.println("tensorbus launch: interrupted; stopping every rank");
            return INTERRUPTED_EXIT;
        }
    }

    /** How long the job's stores let a waiting call wait: the job's {@code --timeout}, else the group default. */
    private Duration storeTimeout() {
        return options.timeout() != null ? options.timeout() : Distributed.DEFAULT_TIMEOUT;
    }

    /** The rounds of an elastic job on this node. */
    private final class ElasticRun {
        private final LaunchOptions base;
        private final DynamicRendezvous rdzv;
        private final String address;
        private int restarts;

        ElasticRun(LaunchOptions base, DynamicRendezvous rdzv, String address) {
            this.base = base;
            this.rdzv = rdzv;
            this.address = address;
        }

        int run() throws InterruptedException {
            int after = -1;
            while (true) {
                DynamicRendezvous.Round round;
                try {
                    round = rdzv.next(after);
                } catch (IllegalStateException | StoreCalls.StoreLostException ex) {
                    err.println("tensorbus launch: failed: " + ex.getMessage());
                    return 1;
                }
                after = round.round();
                Integer end = runRound(round);
                if (end != null) {
                    return end;
                }
                clearErrors();
                ranks.clear();
            }
        }

        /** Runs this node's ranks of {@code round}; the launcher's exit status, or null to go on to the next round. */
        private Integer runRound(DynamicRendezvous.Round round) throws InterruptedException {
            try (LaunchStore store = round.nodeRank() == 0 ? LaunchStore.start("0.0.0.0", 0, storeTimeout(), secret())
                    : null) {
                String master;
                if (store != null) {
                    rdzv.publishMaster(round.round(), address, store.port());
                    master = address + ":" + store.port();
                } else {
                    master = rdzv.master(round.round());
                }
                int colon = master.lastIndexOf(':');
                options = base.forRound(round.nnodes(), round.nodeRank(), master.substring(0, colon),
                        Integer.parseInt(master.substring(colon + 1)));
                err.println("tensorbus launch: round " + round.round() + ": " + round.nnodes() + " node(s) "
                        + round.nodes() + ", this one node rank " + round.nodeRank());
                Exit exit;
                try (RoundWatch watch = RoundWatch.start(rdzv, round, base.elastic().maxNodes())) {
                    peers = watch;
                    exit = attempt(restarts, options.masterPort());
                    peers = null;
                    return after(round, exit, watch.stop());
                }
            } catch (IllegalStateException | StoreCalls.StoreLostException ex) {
                err.println("tensorbus launch: failed: " + ex.getMessage());
                return 1;
            } catch (InterruptedException ex) {
                throw ex;
            } catch (Exception ex) {
                err.println("tensorbus launch: failed: cannot host the store of round " + round.round() + ": "
                        + ex.getMessage());
                rdzv.requestNextRound(round.round());
                return 1;
            }
        }

        /** What follows a round that ended with {@code exit}: an exit status, or null for the next round. */
        private Integer after(DynamicRendezvous.Round round, Exit exit, RoundWatch.Stop stop)
                throws InterruptedException {
            if (exit.failed() == null && exit.peerFailure() == null) {
                if (exit.code() == 0) {
                    rdzv.markDone(round.round());
                    rdzv.awaitDone(round, base.elastic().joinTimeout());
                }
                return exit.code();
            }
            if (exit.peerFailure() != null) {
                if (stop != null && stop.fatal()) {
                    err.println("tensorbus launch: failed: " + stop.reason() + "; stopped the ranks of this node");
                    return 1;
                }
                err.println("tensorbus launch: stopped the ranks of round " + round.round() + ": "
                        + exit.peerFailure());
                return null;
            }
            LaunchedRank r = exit.failed();
            String why = "node " + rdzv.node() + ": " + r.name() + " exited with code " + exit.code()
                    + whyFailed(r);
            if (restarts >= base.maxRestarts()) {
                rdzv.close(why + " (no restarts left of " + base.maxRestarts() + ")");
                err.println("tensorbus launch: failed: " + why + " (no restarts left of " + base.maxRestarts() + ")");
                return exit.code();
            }
            restarts++;
            rdzv.requestNextRound(round.round());
            err.println("tensorbus launch: " + why + "; restarting in a new round (restart " + restarts + " of "
                    + base.maxRestarts() + ")");
            return null;
        }
    }

    /** Node 0's launcher hosts the job's store; the others connect to it. Null, said, when that fails. */
    private LaunchStore jobStore(Duration setup) {
        if (options.nodeRank() == 0) {
            try {
                return LaunchStore.startAt(options.masterAddr(), options.masterPort(), storeTimeout(), secret());
            } catch (Exception e) {
                err.println("tensorbus launch: cannot host the job's store on port " + options.masterPort()
                        + " for --master-addr " + options.masterAddr() + ": " + e.getMessage());
                return null;
            }
        }
        try {
            return LaunchStore.connect(options.masterAddr(), options.masterPort(), setup, storeTimeout(), secret());
        } catch (Exception e) {
            err.println("tensorbus launch: cannot reach the job's store that node 0's launcher hosts at "
                    + options.masterAddr() + ":" + options.masterPort() + " within " + setup.toSeconds() + " s: "
                    + e.getMessage());
            return null;
        }
    }

    /** The exit status of a job of several nodes, said on the way. */
    private int report(Exit exit) {
        if (exit.peerFailure() != null) {
            err.println("tensorbus launch: failed: " + exit.peerFailure() + "; stopped the ranks of this node");
            return 1;
        }
        if (exit.failed() != null) {
            LaunchedRank r = firstFailure(exit.failed());
            err.println("tensorbus launch: failed: " + failure(r));
            return r.process().exitValue();
        }
        return exit.code();
    }

    /** One node's job, with restarts: a new store per attempt when the launcher hosts it. */
    private int attempts() {
        try {
            for (int attempt = 0; ; attempt++) {
                Exit exit = attempt(attempt);
                if (exit.failed() == null) {
                    return exit.code();
                }
                if (shuttingDown) {
                    err.println("tensorbus launch: shutting down (Ctrl-C or SIGTERM); stopped every rank");
                    return INTERRUPTED_EXIT;
                }
                LaunchedRank r = firstFailure(exit.failed());
                if (attempt >= options.maxRestarts()) {
                    String left = options.maxRestarts() > 0 ? " (no restarts left of " + options.maxRestarts() + ")"
                            : "";
                    err.println("tensorbus launch: failed: " + failure(r) + left);
                    return r.process().exitValue();
                }
                err.println("tensorbus launch: " + failure(r) + "; restarting every rank (restart " + (attempt + 1)
                        + " of " + options.maxRestarts() + ")");
                clearErrors();
                ranks.clear();
            }
        } finally {
            deleteErrors();
        }
    }

    /**
     * How one start of every rank ended: its exit status, the rank that failed (null when none did), and why
     * another node ended the job (null when none did).
     */
    private record Exit(int code, LaunchedRank failed, String peerFailure) {
        Exit(int code, LaunchedRank failed) {
            this(code, failed, null);
        }
    }

    /** Starts every rank (a new store when the launcher hosts it), supervises them and stops what is left. */
    private Exit attempt(int attempt) {
        LaunchStore store = null;
        try {
            int port = options.masterPort();
            if (options.hostsStore()) {
                store = startStore();
                if (store == null) {
                    return new Exit(1, null);
                }
                port = store.port();
            }
            return attempt(attempt, port);
        } finally {
            if (store != null) {
                store.close();
            }
        }
    }

    /** Starts every rank, telling them the store's {@code port}, supervises them and stops what is left. */
    private Exit attempt(int attempt, int port) {
        try {
            stoppingSince = Long.MAX_VALUE;
            announce(port, attempt);
            return startAll(port, attempt) ? supervise() : new Exit(1, null);
        } finally {
            stopAll();
            drainOutput();
        }
    }

    private void clearErrors() {
        try (var files = Files.list(errors)) {
            files.forEach(f -> f.toFile().delete());
        } catch (IOException e) {
            // Stale error files only make a later message name an older error.
        }
    }

    private void deleteErrors() {
        try (var files = Files.list(errors)) {
            files.forEach(f -> f.toFile().delete());
        } catch (IOException e) {
            // A temporary directory left behind is harmless.
        }
        errors.toFile().delete();
    }

    private LaunchStore startStore() {
        try {
            return LaunchStore.start(options.masterAddr(), storeTimeout(), secret());
        } catch (Exception e) {
            err.println("tensorbus launch: cannot host the rendezvous store on " + options.masterAddr() + ": " + e);
            return null;
        }
    }

    private void announce(int port, int attempt) {
        int first = options.globalRank(0);
        err.println("tensorbus launch: " + (attempt == 0 ? "starting " : "restarting (" + attempt + " of "
                + options.maxRestarts() + ") ") + options.processesPerNode() + " process(es)"
                + (options.ranksAsThreads() ? " with " + options.nprocPerNode() + " rank thread(s)" : "") + ", ranks "
                + first + " to "
                + (first + options.nprocPerNode() - 1) + " of world size " + options.worldSize() + ", running "
                + options.target() + "; rendezvous store at " + options.masterAddr() + ":" + port
                + (options.hostsStore() ? " (hosted by this launcher)" : options.storeHostedByLauncher()
                        ? " (hosted by node 0's launcher)" : " (hosted by rank 0)"));
    }

    private boolean startAll(int port, int attempt) {
        for (int local = 0; local < options.processesPerNode(); local++) {
            try {
                Path errorFile = errors.resolve("rank-" + options.globalRank(local) + ".error");
                ranks.add(LaunchedRank.start(options, command, local, port, attempt, jobEnv, errorFile, out, err));
            } catch (IOException e) {
                err.println("tensorbus launch: cannot start rank " + options.globalRank(local) + ": " + e.getMessage());
                return false;
            }
        }
        return true;
    }

    /**
     * Looks at every child each {@code --monitor-interval} until all have exited, one has failed (it says so and
     * answers that rank), or the timeout.
     */
    private Exit supervise() {
        long interval = options.monitorInterval().toNanos();
        try {
            while (true) {
                boolean running = false;
                LaunchedRank failed = null;
                for (LaunchedRank r : ranks) {
                    if (r.process().isAlive()) {
                        running = true;
                    } else if (r.process().exitValue() != 0 && (failed == null || r.causedBefore(failed))) {
                        // The first to fail of its own is the cause: the others fail because they lost it.
                        failed = r;
                    }
                }
                if (failed != null) {
                    int code = failed.process().exitValue();
                    String what = failed.name() + " (local rank " + failed.localRank() + ", pid "
                            + failed.process().pid() + ") exited with code " + code + whyFailed(failed);
                    err.println("tensorbus launch: " + what + "; stopping the other ranks");
                    if (peers != null) {
                        peers.rankFailed(what);
                    }
                    return new Exit(code, failed);
                }
                String peerFailure = peers == null ? null : peers.stopReason();
                if (peerFailure != null) {
                    err.println("tensorbus launch: " + peerFailure + "; stopping the ranks of this node");
                    return new Exit(1, null, peerFailure);
                }
                if (!running) {
                    return new Exit(0, null);
                }
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    return new Exit(timedOut(), null);
                }
                TimeUnit.NANOSECONDS.sleep(Math.min(interval, left));
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            err.println("tensorbus launch: interrupted; stopping every rank");
            return new Exit(INTERRUPTED_EXIT, null);
        }
    }

    /**
     * The rank that failed first, by the time of its failure (its exception, else its exit), not of its exit: ranks
     * fail within moments of each other once one does, and the one whose process ended first need not be the
     * cause. A rank that failed because it lost a peer yields to one that failed of its own (a rank killed by a
     * signal writes no error and may be seen to end after the peers that lost it). Failures after the launcher
     * began to stop the ranks are consequences, not causes.
     */
    private LaunchedRank firstFailure(LaunchedRank detected) {
        LaunchedRank first = detected;
        for (LaunchedRank r : ranks) {
            long at = r.failedAt();
            if (at < stoppingSince && !r.process().isAlive() && r.causedBefore(first)) {
                first = r;
            }
        }
        return first;
    }

    /** "rank N exited with code C" and why, for the last line. */
    private String failure(LaunchedRank r) {
        return r.name() + " exited with code " + r.process().exitValue() + whyFailed(r);
    }

    /** ": " and the exception that ended the rank's {@code main}, as it wrote it, or "". */
    private static String whyFailed(LaunchedRank r) {
        String text = r.error();
        return text.isEmpty() ? "" : ": " + text;
    }

    private int timedOut() {
        err.println("tensorbus launch: the job ran longer than --timeout " + options.timeout().toSeconds()
                + " s; stopping every rank");
        stopAll();
        drainOutput();
        err.println("tensorbus launch: failed: timed out after " + options.timeout().toSeconds() + " s");
        return TIMEOUT_EXIT;
    }

    /** The shutdown hook (Ctrl-C, SIGTERM): the children must not outlive the launcher. */
    private void shutDown() {
        shuttingDown = true;
        stopAll();
        // The JVM ends when the hooks do, before the main thread's finally block could clean up.
        deleteErrors();
    }

    /**
     * Stops every child still running: SIGTERM, up to {@link #GRACE} to exit, then SIGKILL. A child that already
     * wrote the exception ending its {@code main} is ending by itself (its shutdown hooks run) and gets no SIGTERM,
     * which would replace its exit status with 143. Runs from the supervisor and from the shutdown hook (Ctrl-C),
     * hence synchronized.
     */
    private synchronized void stopAll() {
        List<LaunchedRank> alive = ranks.stream().filter(r -> r.process().isAlive()).toList();
        if (alive.isEmpty()) {
            return;
        }
        stoppingSince = Math.min(stoppingSince, System.currentTimeMillis());
        alive.stream().filter(r -> !r.wroteItsError()).forEach(LaunchedRank::terminate);
        long deadline = System.nanoTime() + GRACE.toNanos();
        try {
            for (LaunchedRank r : alive) {
                r.process().waitFor(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
            }
        } catch (InterruptedException e) {
            // Interrupted while being polite: skip to killing, and keep the interrupt for the caller.
            Thread.currentThread().interrupt();
        }
        for (LaunchedRank r : alive) {
            if (r.process().isAlive()) {
                err.println("tensorbus launch: " + r.name() + " did not stop within " + GRACE.toSeconds()
                        + " s of SIGTERM; killing it");
                r.kill();
            }
        }
    }

    private void drainOutput() {
        try {
            for (LaunchedRank r : ranks) {
                r.drainOutput(DRAIN_MILLIS);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static void removeHook(Thread hook) {
        try {
            Runtime.getRuntime().removeShutdownHook(hook);
        } catch (IllegalStateException e) {
            // The JVM is already shutting down: the hook is running or has run.
        }
    }

    private static int usage(PrintStream err, String problem) {
        err.println("tensorbus launch: " + problem);
        err.println("(tensorbus launch --help shows its options)");
        return Cli.USAGE;
    }
}
