package io.tensorbus.workloads.cli;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * The command line of {@code tensorbus launch}, torchrun's options, read into {@link LaunchOptions} by
 * {@link #options}: the checks that concern several options at once are made there.
 */
@Command(name = "launch",
        customSynopsis = {"tensorbus launch --nproc-per-node N [options] TARGET [args]",
            "       tensorbus launch --nproc-per-node N [options] -jar APP.jar [args]"},
        description = {"start N processes of TARGET (your main class, a workload name, or your jar) with RANK,"
            + " WORLD_SIZE, MASTER_ADDR and the job's secret set, as torchrun does"},
        footer = {"",
            "Each process gets RANK, LOCAL_RANK, WORLD_SIZE, LOCAL_WORLD_SIZE, GROUP_RANK, MASTER_ADDR, MASTER_PORT,",
            "TORCHELASTIC_RESTART_COUNT, TORCHELASTIC_MAX_RESTARTS, TORCHELASTIC_RUN_ID and the job's secret",
            "TENSORBUS_SECRET: a new random one for a one-node job unless TENSORBUS_SECRET or TENSORBUS_SECRET_FILE is",
            "set; a job of several nodes needs one of those on every node (make one with 'tensorbus secret'). A rank",
            "whose launcher dies ends too; when a rank fails the launcher stops the others and says why, and with",
            "several nodes every node's launcher ends within seconds of a failure or of a launcher that stops",
            "answering (TENSORBUS_SETUP_TIMEOUT, in seconds, bounds the wait for the others at the start; default",
            "300). TENSORBUS_JVM_OPTS adds JVM options to every process (not the class path: use --classpath); with",
            "no more cores than processes they run the serial collector unless it names another. Across machines:",
            "docs/multi-host.md.",
            "",
            "Examples:",
            "  tensorbus launch --nproc-per-node 2 -cp target/classes:lib/* 'com.example.Train' --epochs 3",
            "  tensorbus launch --nproc-per-node 2 -jar build/app.jar --epochs 3",
            "  two hosts, 10.0.0.1 and 10.0.0.2, sharing a secret file (on each; K is 0 on 10.0.0.1, else 1):",
            "  TENSORBUS_SECRET_FILE=~/.tensorbus-secret tensorbus launch --nnodes 2 --node-rank K \\",
            "      --nproc-per-node 2 --master-addr 10.0.0.1 --master-port 29500 ddp-fashion-mnist",
            "  an elastic job of 2 to 3 hosts (the same line on each; the c10d store on 10.0.0.1):",
            "  tensorbus launch --nnodes 2:3 --nproc-per-node 2 --rdzv-backend c10d \\",
            "      --rdzv-endpoint 10.0.0.1:29500 --rdzv-id job1 --max-restarts 3 \\",
            "      ddp-fashion-mnist --checkpoint-dir /shared/ckpt"})
public class LaunchFlags implements Cli.PassesArgumentsOn {
    @Mixin
    HelpOption help = new HelpOption();
    @Option(names = {"--nproc-per-node", "--nproc_per_node"}, paramLabel = "N",
            description = "processes to start on this node, 1 to " + LaunchOptions.MAX_NPROC)
    Integer nproc;
    @Option(names = "--nnodes", paramLabel = "M", description = {"nodes in the job (default 1); MIN:MAX for an"
        + " elastic job, which runs on as long as MIN nodes are left and admits nodes up to MAX"})
    String nnodes = "1";
    @Option(names = {"--node-rank", "--node_rank"}, paramLabel = "K", description = "this node's index, 0 to M-1"
            + " (default 0)")
    Integer nodeRank;
    @Option(names = {"--master-addr", "--master_addr"}, paramLabel = "A", description = {"host of the job's"
        + " rendezvous store, an address every node reaches (default 127.0.0.1); with several nodes, node 0's"
        + " launcher hosts the store there"})
    String masterAddr;
    @Option(names = {"--master-port", "--master_port"}, paramLabel = "P", description = {"its port, 0 to 65535;"
        + " with one node, 0 or none makes the launcher host the store on a free port; with several nodes the"
        + " default is " + LaunchOptions.DEFAULT_MULTI_NODE_PORT})
    Integer masterPort;
    @Option(names = {"--local-addr", "--local_addr"}, paramLabel = "ADDR", description = {"this node's address on"
        + " the network the other nodes reach it on; default: the source address of the route to --master-addr."
        + " Set it, or TENSORBUS_SOCKET_IFNAME=IFACE, on a host with several networks"})
    String localAddr;
    @Option(names = "--standalone", description = {"one node, the rendezvous store on a free port of 127.0.0.1 (the"
        + " default for one node; refuses --nnodes, --master-addr and --master-port)"})
    boolean standalone;
    @Option(names = "--ranks-as-threads", description = {"run this node's ranks as threads of one JVM, which compiles"
        + " each kernel once for all of them, instead of one process each; a main class of yours must read its rank"
        + " through env:// or Distributed.environment(), not System.getenv()"})
    boolean ranksAsThreads;
    @Option(names = {"--rdzv-backend", "--rdzv_backend"}, paramLabel = "B", description = {"the elastic rendezvous:"
        + " c10d (its state in a store at the endpoint, hosted by the node whose address it is) or hazelcast (in a"
        + " Hazelcast cluster of the nodes, with no single host whose loss ends the job)"})
    String rdzvBackend;
    @Option(names = {"--rdzv-endpoint", "--rdzv_endpoint"}, paramLabel = "HOST:PORT", description = {"c10d: where"
        + " the store listens; hazelcast: the member every node joins through, or a comma-separated list of them"
        + " (default --master-addr:port)"})
    String rdzvEndpoint;
    @Option(names = {"--rdzv-id", "--rdzv_id"}, paramLabel = "JOB", description = "the job's id, the same on every"
            + " node (default none)")
    String rdzvId;
    @Option(names = {"--rdzv-conf", "--rdzv_conf"}, paramLabel = "K=V,...", description = {"join_timeout (seconds"
        + " a node waits for a round, default 600) and last_call_timeout (seconds a round waits for more nodes once"
        + " MIN joined, default 30)"})
    String rdzvConf;
    @Option(names = {"--max-restarts", "--max_restarts"}, paramLabel = "R", description = {"when a rank fails, stop"
        + " every rank and start them all again, up to R times (default 0; several nodes need the elastic"
        + " rendezvous); each learns the count from TORCHELASTIC_RESTART_COUNT"})
    Integer maxRestarts;
    @Option(names = {"--monitor-interval", "--monitor_interval"}, paramLabel = "SECONDS",
            description = "how often the launcher checks its processes (default 0.1)")
    Double monitorInterval;
    @Option(names = {"--log-dir", "--log_dir"}, paramLabel = "DIR", description = {"also write each rank's output"
        + " to DIR/attempt_K/LOCAL_RANK/stdout.log and stderr.log (K: 0 for the first start, then the restart's"
        + " number)"})
    String logDir;
    @Option(names = "--redirects", paramLabel = "S", description = {"streams written to the log files only: 0"
        + " none, 1 stdout, 2 stderr, 3 both, or LOCAL_RANK:N pairs such as 0:3,1:2 (needs --log-dir)"})
    String redirects;
    @Option(names = "--tee", paramLabel = "S", description = {"streams written to the log files and the console"
        + " (as --redirects; with --log-dir and neither option, every stream is teed)"})
    String tee;
    @Option(names = {"--local-ranks-filter", "--local_ranks_filter"}, paramLabel = "L",
            description = "show only these local ranks' output on the console, as 0 or 0,2")
    String localRanksFilter;
    @Option(names = "--metrics-port", paramLabel = "P", description = {"serve each rank's meters to Prometheus at"
        + " http://127.0.0.1:P+LOCAL_RANK/metrics (with --ranks-as-threads, all of them on P); TENSORBUS_METRICS_HOST"
        + " names another address to listen on, whose scrapes must then carry the job secret's bearer token"})
    Integer metricsPort;
    @Option(names = "--timeout", paramLabel = "SECONDS",
            description = "stop every process and fail when the job runs longer (default: no limit)")
    Integer timeout;
    @Option(names = {"--classpath", "-cp", "--class-path", "-classpath"}, paramLabel = "PATH", description = {"your"
        + " classes and jars (':'-separated, 'dir/*' for every jar in dir), put before tensorbus's own; without it,"
        + " a main class reads CLASSPATH, as java does"})
    String classPath;
    @Option(names = "-jar", paramLabel = "APP.jar", description = {"run the Main-Class of APP.jar's manifest, with"
        + " APP.jar (and the jars its manifest's Class-Path names) before tensorbus's own classes, and its"
        + " Add-Opens and Add-Exports applied"})
    String jar;
    @Parameters(paramLabel = "TARGET", description = {"a main class of your class path or of tensorbus"
        + " ('io.tensorbus.workloads.examples.GroupAllReduce'), or a workload name, run as 'tensorbus run TARGET"
        + " [args]'; then its arguments, passed on untouched"})
    List<String> target = new ArrayList<>();

    /**
     * The launch these options describe.
     *
     * @param jarArgs with {@code -jar}, the program's arguments (what followed the jar); else null
     * @throws IllegalArgumentException when an option is out of range or options disagree
     */
    LaunchOptions options(List<String> jarArgs) {
        if (help.help) {
            return LaunchOptions.helpOnly();
        }
        if (nproc == null) {
            throw new IllegalArgumentException("--nproc-per-node is required: the number of processes to start on"
                    + " this node, 1 to " + LaunchOptions.MAX_NPROC);
        }
        String what;
        List<String> whatArgs;
        if (jar != null) {
            what = nonBlank("-jar", jar, "the path of an executable jar");
            whatArgs = jarArgs;
        } else if (target.isEmpty()) {
            throw new IllegalArgumentException("missing TARGET: a main class such as"
                    + " io.tensorbus.workloads.examples.GroupAllReduce, or a workload name");
        } else {
            what = target.getFirst();
            whatArgs = List.copyOf(target.subList(1, target.size()));
        }
        return build(what, whatArgs);
    }

    private LaunchOptions build(String what, List<String> whatArgs) {
        int n = Cli.range("--nproc-per-node", nproc, 1, LaunchOptions.MAX_NPROC);
        String addr = masterAddr == null ? "127.0.0.1"
                : nonBlank("--master-addr", masterAddr, "a host name or address");
        Duration limit = timeout == null ? null : Duration.ofSeconds(Cli.range("--timeout", timeout, 1,
                Integer.MAX_VALUE));
        int restarts = maxRestarts == null ? 0 : Cli.range("--max-restarts", maxRestarts, 0, Integer.MAX_VALUE);
        Duration every = monitorInterval == null ? LaunchOptions.DEFAULT_MONITOR_INTERVAL : seconds(monitorInterval);
        String cp = classPath == null ? null : nonBlank("--classpath", classPath,
                "a class path such as target/classes:lib/*");
        String local = localAddr == null ? null : nonBlank("--local-addr", localAddr, "an address of this host");
        LaunchLogs logs = LaunchLogs.parse(logDir == null ? null : nonBlank("--log-dir", logDir,
                "a directory for the ranks' log files"), redirects, tee, localRanksFilter);
        ElasticOptions elastic = elastic(addr);
        if (elastic != null) {
            return new LaunchOptions(n, elastic.maxNodes(), 0, addr, 0, limit, what, whatArgs, false, cp, jar != null,
                    restarts, every, logs, local, elastic, ranksAsThreads, metricsPort(n));
        }
        int nodes = ElasticOptions.nodeRange(nnodes)[0];
        int rank = checkFixedNodes(n, nodes, restarts);
        int port = masterPort != null ? masterPort : nodes > 1 ? LaunchOptions.DEFAULT_MULTI_NODE_PORT : 0;
        return new LaunchOptions(n, nodes, rank, addr, port, limit, what, whatArgs, false, cp, jar != null, restarts,
                every, logs, local, null, ranksAsThreads, metricsPort(n));
    }

    /** The checked {@code --metrics-port} for {@code n} ranks a node, or -1 when none is given. */
    private int metricsPort(int n) {
        if (metricsPort == null) {
            return -1;
        }
        return Cli.range("--metrics-port", metricsPort, 1, 65536 - (ranksAsThreads ? 1 : n));
    }

    /** Checks the options of a fixed set of nodes together; returns this node's rank. */
    private int checkFixedNodes(int n, int nodes, int restarts) {
        int rank = nodeRank == null ? 0 : Cli.range("--node-rank", nodeRank, 0, Integer.MAX_VALUE);
        if (masterPort != null) {
            Cli.range("--master-port", masterPort, 0, 65535);
        }
        if (rank >= nodes) {
            throw new IllegalArgumentException("--node-rank must be in [0, " + nodes + ") for --nnodes " + nodes
                    + ", got " + rank);
        }
        if ((long) nodes * n > Integer.MAX_VALUE) {
            throw new IllegalArgumentException("--nnodes " + nodes + " times --nproc-per-node " + n
                    + " is more ranks than an int holds");
        }
        if (nodes > 1 && masterPort != null && masterPort == 0) {
            throw new IllegalArgumentException("--master-port 0 (a free port picked by the launcher) works with one"
                    + " node only; with --nnodes " + nodes + " give every node the same port 1 to 65535");
        }
        if (standalone && (!nnodes.equals("1") || masterAddr != null || masterPort != null || nodeRank != null)) {
            throw new IllegalArgumentException("--standalone runs one node with its own rendezvous store: leave out"
                    + " --nnodes, --node-rank, --master-addr and --master-port");
        }
        if (restarts > 0 && nodes > 1) {
            throw new IllegalArgumentException("--max-restarts with several nodes needs the elastic rendezvous,"
                    + " which restarts every node's ranks together: add --rdzv-backend c10d (or hazelcast) and"
                    + " --rdzv-endpoint HOST:PORT, and leave out --node-rank");
        }
        return rank;
    }

    /** The elastic rendezvous when {@code --nnodes} is a range or a {@code --rdzv-*} option is given, else null. */
    private ElasticOptions elastic(String addr) {
        int[] range = ElasticOptions.nodeRange(nnodes.trim());
        boolean asked = range[0] != range[1] || rdzvBackend != null || rdzvEndpoint != null || rdzvId != null
                || rdzvConf != null;
        if (!asked) {
            return null;
        }
        if (nodeRank != null || standalone) {
            throw new IllegalArgumentException("with the elastic rendezvous (--nnodes MIN:MAX, --rdzv-*) the"
                    + " rendezvous assigns the nodes' ranks: leave out --node-rank and --standalone");
        }
        String endpoint = rdzvEndpoint != null ? nonBlank("--rdzv-endpoint", rdzvEndpoint, "HOST:PORT")
                : addr + ":" + (masterPort != null ? masterPort : LaunchOptions.DEFAULT_MULTI_NODE_PORT);
        String id = rdzvId == null ? null : nonBlank("--rdzv-id", rdzvId, "the job's id, the same on every node");
        return ElasticOptions.of(range[0], range[1], rdzvBackend == null ? null : rdzvBackend.trim(), endpoint, id,
                rdzvConf);
    }

    private static Duration seconds(double s) {
        if (!(s > 0) || s > 3600) {
            throw new IllegalArgumentException("--monitor-interval must be a number of seconds above 0 and at most"
                    + " 3600, got " + s);
        }
        return Duration.ofNanos((long) (s * 1e9));
    }

    private static String nonBlank(String name, String value, String what) {
        if (value.isBlank()) {
            throw new IllegalArgumentException(name + " must be " + what + ", got ''");
        }
        return value.trim();
    }
}
