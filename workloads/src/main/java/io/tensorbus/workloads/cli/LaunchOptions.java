package io.tensorbus.workloads.cli;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * The parsed options of {@code tensorbus launch}, torchrun's: how many processes on this node, how many
 * nodes, which node this is, where rank 0's rendezvous store listens, an optional job timeout, and what each
 * process runs.
 *
 * @param nprocPerNode processes started on this node, 1 to {@link #MAX_NPROC}
 * @param nnodes nodes in the job, at least 1
 * @param nodeRank this node's index, 0 to {@code nnodes - 1}
 * @param masterAddr the host of the rendezvous store
 * @param masterPort its TCP port, or 0 when the launcher hosts the store on a free port (one node only)
 * @param timeout how long the whole job may run, or null for no limit
 * @param target a fully qualified main class, a workload name run as {@code Main run TARGET}, or with
 *     {@code jar} the path of an executable jar
 * @param targetArgs the arguments passed to every process after the target
 * @param help true when {@code --help} was asked (the other fields then hold defaults)
 * @param classPath the user's class path ({@code --classpath}), put before tensorbus's own; null when not
 *     given (then {@code CLASSPATH} is used, as {@code java} does)
 * @param jar true when TARGET is a jar ({@code -jar app.jar}) whose manifest names the main class
 * @param maxRestarts how often the job is restarted after a rank fails ({@code --max-restarts}, one node only)
 * @param monitorInterval how often the launcher looks at its processes ({@code --monitor-interval})
 * @param logs where the processes' output goes ({@code --log-dir}, {@code --redirects}, {@code --tee},
 *     {@code --local-ranks-filter})
 * @param localAddr this node's address that the other nodes reach ({@code --local-addr}), or null to take the
 *     source address of the route to the master
 * @param elastic the elastic rendezvous ({@code --nnodes MIN:MAX}, {@code --rdzv-*}), or null for a fixed set of
 *     nodes that meet at {@code --master-addr}
 * @param ranksAsThreads true to run this node's ranks as threads of one JVM ({@code --ranks-as-threads},
 *     {@link RankThreads}) instead of one process each
 * @param metricsPort the first port the ranks serve their meters to Prometheus on ({@code --metrics-port}: local rank
 *     K of a process per rank on {@code metricsPort + K}, a JVM of rank threads on {@code metricsPort}), or -1 for none
 */
public record LaunchOptions(int nprocPerNode, int nnodes, int nodeRank, String masterAddr, int masterPort,
        Duration timeout, String target, List<String> targetArgs, boolean help, String classPath, boolean jar,
        int maxRestarts, Duration monitorInterval, LaunchLogs logs, String localAddr, ElasticOptions elastic,
        boolean ranksAsThreads, int metricsPort) {
    /** torchrun's default {@code --monitor-interval}. */
    public static final Duration DEFAULT_MONITOR_INTERVAL = Duration.ofMillis(100);

    /** The most processes one launcher starts. */
    public static final int MAX_NPROC = 1024;

    /**
     * {@code tensorbus launch}'s arguments for a job of {@code nprocPerNode} ranks on this node running {@code target}
     * (a main class and its arguments): one process per rank, or with {@code ranksAsThreads} one JVM running them as
     * threads.
     */
    public static List<String> jobArgs(int nprocPerNode, boolean ranksAsThreads, List<String> target) {
        List<String> args = new ArrayList<>();
        if (ranksAsThreads) {
            args.add("--ranks-as-threads");
        }
        args.addAll(List.of("--nproc-per-node", Integer.toString(nprocPerNode)));
        args.addAll(target);
        return List.copyOf(args);
    }

    /**
     * Refuses {@code --ranks-as-threads} given to a workload that runs inside a launched job, where the launcher, not
     * the workload, decides how ranks run.
     *
     * @throws IllegalArgumentException when {@code ranksAsThreads} is set
     */
    public static void refuseRanksAsThreadsInsideAJob(boolean ranksAsThreads) {
        if (ranksAsThreads) {
            throw new IllegalArgumentException("--ranks-as-threads is for a job this command starts; under"
                    + " tensorbus launch, give it to launch");
        }
    }

    /** torchrun's default port, used when several nodes are launched and no port is given. */
    public static final int DEFAULT_MULTI_NODE_PORT = 29500;

    /**
     * The same options for one round of the elastic rendezvous: {@code nnodes} nodes of which this is
     * {@code nodeRank}, the round's store at {@code masterAddr:masterPort}.
     */
    public LaunchOptions forRound(int nnodes, int nodeRank, String masterAddr, int masterPort) {
        return new LaunchOptions(nprocPerNode, nnodes, nodeRank, masterAddr, masterPort, timeout, target, targetArgs,
                help, classPath, jar, maxRestarts, monitorInterval, logs, localAddr, elastic, ranksAsThreads,
                metricsPort);
    }

    /** The port local rank {@code localRank} serves its meters on, or -1 for none. */
    public int metricsPort(int localRank) {
        return metricsPort < 0 ? -1 : ranksAsThreads ? metricsPort : metricsPort + localRank;
    }

    /** The JVMs this launcher starts at a time: one per rank, or one for all with {@link #ranksAsThreads}. */
    public int processesPerNode() {
        return ranksAsThreads ? 1 : nprocPerNode;
    }

    /** The processes in the whole job: {@code nnodes * nprocPerNode}. */
    public int worldSize() {
        return nnodes * nprocPerNode;
    }

    /** The global rank of this node's process {@code localRank}. */
    public int globalRank(int localRank) {
        return nodeRank * nprocPerNode + localRank;
    }

    /**
     * True when this launcher hosts the rendezvous store: one node and no port given, or node 0 of several or of an
     * elastic round (the launchers of the other nodes and every rank connect to it, as to torchrun's agent store).
     */
    public boolean hostsStore() {
        return masterPort == 0 || ((nnodes > 1 || elastic != null) && nodeRank == 0);
    }

    /** True when a launcher hosts the store of this job, this one or node 0's: the ranks connect as clients. */
    public boolean storeHostedByLauncher() {
        return masterPort == 0 || nnodes > 1 || elastic != null;
    }

    /**
     * Parses {@code launch}'s arguments: options (as {@code --name value} or {@code --name=value}, and with
     * underscores as torchrun takes them), then TARGET and its arguments, which are passed on untouched (a
     * {@code --} before TARGET is allowed); with {@code -jar APP.jar}, what follows the jar is the program's.
     *
     * @throws IllegalArgumentException saying which option is wrong and what is allowed
     */
    public static LaunchOptions parse(List<String> args) {
        int jar = jarOption(args);
        List<String> own = jar < 0 ? args : args.subList(0, Math.min(jar + 2, args.size()));
        LaunchFlags flags = Cli.parse(new LaunchFlags(), own);
        return flags.options(jar < 0 ? null : List.copyOf(args.subList(Math.min(jar + 2, args.size()), args.size())));
    }

    /** The usage of {@code tensorbus launch}, as {@code --help} prints it. */
    public static String usage() {
        return Cli.usage(new LaunchFlags());
    }

    /** The options of a run that only asked for {@code --help}. */
    static LaunchOptions helpOnly() {
        return new LaunchOptions(1, 1, 0, "127.0.0.1", 0, null, null, List.of(), true, null, false, 0,
                DEFAULT_MONITOR_INTERVAL, LaunchLogs.consoleOnly(), null, null, false, -1);
    }

    /** Where {@code -jar} stands among the leading options of {@code args}, or -1. */
    private static int jarOption(List<String> args) {
        int i = 0;
        while (i < args.size() && args.get(i).startsWith("-") && !args.get(i).equals("--")) {
            String a = args.get(i);
            if (a.equals("-jar")) {
                return i;
            }
            boolean takesValue = !a.contains("=")
                    && !List.of("--standalone", "--ranks-as-threads", "-h", "--help").contains(a);
            i += takesValue ? 2 : 1;
        }
        return -1;
    }
}
