package io.tensorbus.workloads.cli;

import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

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
 */
public record LaunchOptions(int nprocPerNode, int nnodes, int nodeRank, String masterAddr, int masterPort,
        Duration timeout, String target, List<String> targetArgs, boolean help, String classPath, boolean jar,
        int maxRestarts, Duration monitorInterval, LaunchLogs logs, String localAddr, ElasticOptions elastic) {
    /** torchrun's default {@code --monitor-interval}. */
    public static final Duration DEFAULT_MONITOR_INTERVAL = Duration.ofMillis(100);

    /** The most processes one launcher starts. */
    public static final int MAX_NPROC = 1024;

    /** torchrun's default port, used when several nodes are launched and no port is given. */
    public static final int DEFAULT_MULTI_NODE_PORT = 29500;

    /** The usage text of {@code tensorbus launch}. */
    public static final String USAGE = """
            usage: tensorbus launch --nproc-per-node N [--nnodes M --node-rank K --master-addr A --master-port P]
                                    [--nnodes MIN:MAX --rdzv-backend c10d|hazelcast --rdzv-endpoint HOST:PORT
                                     --rdzv-id JOB [--rdzv-conf join_timeout=S,last_call_timeout=S]]
                                    [--local-addr ADDR] [--standalone] [--max-restarts R] [--monitor-interval SECONDS]
                                    [--log-dir DIR [--redirects S] [--tee S]] [--local-ranks-filter L]
                                    [--timeout SECONDS] [--classpath PATH] TARGET [args]
                   tensorbus launch --nproc-per-node N [options] -jar APP.jar [args]
              --nproc-per-node N   processes to start on this node (1 to %d)
              --nnodes M           nodes in the job (default 1); MIN:MAX for an elastic job, which runs on
                                   as long as MIN nodes are left and admits nodes up to MAX
              --rdzv-backend B     the elastic rendezvous: c10d (its state in a store at the endpoint, hosted
                                   by the node whose address it is) or hazelcast (in a Hazelcast cluster of the
                                   nodes, with no single host whose loss ends the job)
              --rdzv-endpoint HOST:PORT
                                   c10d: where the store listens; hazelcast: the member every node joins
                                   through, or a comma-separated list of them (default --master-addr:port)
              --rdzv-id JOB        the job's id, the same on every node (default none)
              --rdzv-conf K=V,...  join_timeout (seconds a node waits for a round, default 600) and
                                   last_call_timeout (seconds a round waits for more nodes once MIN joined,
                                   default 30)
              --node-rank K        this node's index, 0 to M-1 (default 0)
              --master-addr A      host of the job's rendezvous store, an address every node reaches (default
                                   127.0.0.1); with several nodes, node 0's launcher hosts the store there
              --master-port P      its port, 0 to 65535; with one node, 0 or none makes the launcher host the
                                   store on a free port; with several nodes the default is %d
              --local-addr ADDR    this node's address on the network the other nodes reach it on (torchrun's
                                   option); default: the source address of the route to --master-addr. Set it,
                                   or TENSORBUS_SOCKET_IFNAME=IFACE, on a host with several networks
              --standalone         one node, the rendezvous store on a free port of 127.0.0.1 (the default
                                   for one node; refuses --nnodes, --master-addr and --master-port)
              --max-restarts R     when a rank fails, stop every rank and start them all again, up to R
                                   times (default 0; several nodes need the elastic rendezvous); each learns
                                   the count from TORCHELASTIC_RESTART_COUNT
              --monitor-interval SECONDS
                                   how often the launcher checks its processes (default 0.1)
              --log-dir DIR        also write each rank's output to DIR/attempt_K/LOCAL_RANK/stdout.log and
                                   stderr.log (K: 0 for the first start, then the restart's number)
              --redirects S        streams written to the log files only: 0 none, 1 stdout, 2 stderr,
                                   3 both, or LOCAL_RANK:N pairs such as 0:3,1:2 (needs --log-dir)
              --tee S              streams written to the log files and the console (as --redirects; with
                                   --log-dir and neither option, every stream is teed)
              --local-ranks-filter L
                                   show only these local ranks' output on the console, as 0 or 0,2
              --timeout SECONDS    stop every process and fail when the job runs longer (default: no limit)
              --classpath PATH, -cp PATH
                                   your classes and jars (':'-separated, 'dir/*' for every jar in dir), put
                                   before tensorbus's own; without it, a main class reads CLASSPATH, as
                                   java does
              TARGET               a main class of your class path or of tensorbus
                                   ('io.tensorbus.workloads.examples.GroupAllReduce'), or a workload name, run
                                   as 'tensorbus run TARGET [args]'
              -jar APP.jar         run the Main-Class of APP.jar's manifest, with APP.jar (and the jars its
                                   manifest's Class-Path names) before tensorbus's own classes, and its
                                   Add-Opens and Add-Exports applied
            Each process gets RANK, LOCAL_RANK, WORLD_SIZE, LOCAL_WORLD_SIZE, GROUP_RANK, MASTER_ADDR,
            MASTER_PORT, TORCHELASTIC_RESTART_COUNT, TORCHELASTIC_MAX_RESTARTS, TORCHELASTIC_RUN_ID and the
            job's secret TENSORBUS_SECRET: a new random one for a one-node job unless TENSORBUS_SECRET or
            TENSORBUS_SECRET_FILE is set; a job of several nodes needs one of those on every node (make one
            with 'tensorbus secret'). A rank whose launcher dies ends too; when a rank fails the launcher stops
            the others and says why, and with several nodes every node's launcher ends within seconds of a
            failure or of a launcher that stops answering (TENSORBUS_SETUP_TIMEOUT, in seconds, bounds the
            wait for the others at the start; default 300). Option names may also be written with
            underscores, as torchrun accepts them. TENSORBUS_JVM_OPTS adds JVM options to every process (not
            the class path: use --classpath); with no more cores than processes they run the serial collector
            unless it names another. Across machines: docs/multi-host.md.
            Examples:
              tensorbus launch --nproc-per-node 2 -cp target/classes:lib/* 'com.example.Train' --epochs 3
              tensorbus launch --nproc-per-node 2 -jar build/app.jar --epochs 3
              two hosts, 10.0.0.1 and 10.0.0.2, sharing a secret file (on each; K is 0 on 10.0.0.1, else 1):
              TENSORBUS_SECRET_FILE=~/.tensorbus-secret tensorbus launch --nnodes 2 --node-rank K \\
                  --nproc-per-node 2 --master-addr 10.0.0.1 --master-port 29500 ddp-fashion-mnist
              an elastic job of 2 to 3 hosts (the same line on each; the c10d store on 10.0.0.1):
              tensorbus launch --nnodes 2:3 --nproc-per-node 2 --rdzv-backend c10d \\
                  --rdzv-endpoint 10.0.0.1:29500 --rdzv-id job1 --max-restarts 3 \\
                  ddp-fashion-mnist --checkpoint-dir /shared/ckpt""".formatted(
            MAX_NPROC, DEFAULT_MULTI_NODE_PORT);

    private static final List<String> KNOWN = List.of("--nproc-per-node", "--nnodes", "--node-rank", "--master-addr",
            "--master-port", "--timeout", "--classpath", "-jar", "--help", "--standalone", "--max-restarts",
            "--monitor-interval", "--log-dir", "--redirects", "--tee", "--local-ranks-filter", "--local-addr",
            "--rdzv-backend", "--rdzv-endpoint", "--rdzv-id", "--rdzv-conf");

    /**
     * The same options for one round of the elastic rendezvous: {@code nnodes} nodes of which this is
     * {@code nodeRank}, the round's store at {@code masterAddr:masterPort}.
     */
    public LaunchOptions forRound(int nnodes, int nodeRank, String masterAddr, int masterPort) {
        return new LaunchOptions(nprocPerNode, nnodes, nodeRank, masterAddr, masterPort, timeout, target, targetArgs,
                help, classPath, jar, maxRestarts, monitorInterval, logs, localAddr, elastic);
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
     * Parses {@code launch}'s arguments: options (as {@code --name value} or {@code --name=value}), then
     * TARGET and its arguments, which are passed on untouched (a {@code --} before TARGET is allowed).
     *
     * @throws IllegalArgumentException saying which option is wrong and what is allowed
     */
    public static LaunchOptions parse(List<String> args) {
        Parser p = new Parser();
        int i = 0;
        while (i < args.size() && args.get(i).startsWith("-")) {
            String a = args.get(i++);
            if (a.equals("--")) {
                break;
            }
            if (a.equals("-h") || a.equals("--help")) {
                p.help = true;
                continue;
            }
            int eq = a.indexOf('=');
            String name = canonical((eq > 0 ? a.substring(0, eq) : a).replace('_', '-'));
            if (name.equals("--standalone") && eq < 0) {
                p.standalone = true;
                continue;
            }
            if (!KNOWN.contains(name)) {
                throw new IllegalArgumentException("unknown option '" + a + "'; known options: "
                        + String.join(", ", KNOWN));
            }
            if (eq < 0 && i >= args.size()) {
                throw new IllegalArgumentException("option " + name + " needs a value");
            }
            p.set(name, eq > 0 ? a.substring(eq + 1) : args.get(i++));
            if (name.equals("-jar")) {
                // As with java: what follows the jar is the program's.
                break;
            }
        }
        if (p.help) {
            return new LaunchOptions(1, 1, 0, "127.0.0.1", 0, null, null, List.of(), true, null, false, 0,
                    DEFAULT_MONITOR_INTERVAL, LaunchLogs.consoleOnly(), null, null);
        }
        if (p.jar != null) {
            return p.build(p.jar, List.copyOf(args.subList(i, args.size())));
        }
        if (i >= args.size()) {
            throw new IllegalArgumentException("missing TARGET: a main class such as"
                    + " io.tensorbus.workloads.examples.GroupAllReduce, or a workload name");
        }
        return p.build(args.get(i), List.copyOf(args.subList(i + 1, args.size())));
    }

    private static String canonical(String name) {
        return switch (name) {
            case "-cp", "--class-path", "-classpath" -> "--classpath";
            default -> name;
        };
    }

    /** Collects option values, then checks them together. */
    private static final class Parser {
        private final Set<String> seen = new HashSet<>();
        private boolean help;
        private Integer nproc;
        private int nnodes = 1;
        private int nodeRank;
        private String masterAddr = "127.0.0.1";
        private Integer masterPort;
        private Duration timeout;
        private String classPath;
        private String jar;
        private boolean standalone;
        private int maxRestarts;
        private Duration monitorInterval = DEFAULT_MONITOR_INTERVAL;
        private String logDir;
        private String redirects;
        private String tee;
        private String localRanksFilter;
        private String localAddr;
        private String nnodesSpec;
        private String rdzvBackend;
        private String rdzvEndpoint;
        private String rdzvId;
        private String rdzvConf;

        void set(String name, String value) {
            if (!seen.add(name)) {
                throw new IllegalArgumentException("option " + name + " is given twice");
            }
            switch (name) {
                case "--nproc-per-node" -> nproc = number(name, value, 1, MAX_NPROC);
                case "--nnodes" -> nnodesSpec = value.trim();
                case "--node-rank" -> nodeRank = number(name, value, 0, Integer.MAX_VALUE);
                case "--master-port" -> masterPort = number(name, value, 0, 65535);
                case "--timeout" -> timeout = Duration.ofSeconds(number(name, value, 1, Integer.MAX_VALUE));
                case "--master-addr" -> masterAddr = address(value);
                case "--classpath" -> classPath = nonBlank(name, value, "a class path such as target/classes:lib/*");
                case "-jar" -> jar = nonBlank(name, value, "the path of an executable jar");
                case "--max-restarts" -> maxRestarts = number(name, value, 0, Integer.MAX_VALUE);
                case "--monitor-interval" -> monitorInterval = seconds(name, value);
                case "--log-dir" -> logDir = nonBlank(name, value, "a directory for the ranks' log files");
                case "--redirects" -> redirects = value;
                case "--tee" -> tee = value;
                case "--local-ranks-filter" -> localRanksFilter = value;
                case "--local-addr" -> localAddr = nonBlank(name, value, "an address of this host");
                case "--rdzv-backend" -> rdzvBackend = value.trim();
                case "--rdzv-endpoint" -> rdzvEndpoint = nonBlank(name, value, "HOST:PORT");
                case "--rdzv-id" -> rdzvId = nonBlank(name, value, "the job's id, the same on every node");
                case "--rdzv-conf" -> rdzvConf = value;
                default -> throw new IllegalArgumentException("option " + name + " takes no value");
            }
        }

        LaunchOptions build(String target, List<String> targetArgs) {
            if (nproc == null) {
                throw new IllegalArgumentException("--nproc-per-node is required: the number of processes to"
                        + " start on this node, 1 to " + MAX_NPROC);
            }
            ElasticOptions elastic = elastic();
            if (elastic != null) {
                return new LaunchOptions(nproc, elastic.maxNodes(), 0, masterAddr, 0, timeout, target, targetArgs,
                        false, classPath, jar != null, maxRestarts, monitorInterval,
                        LaunchLogs.parse(logDir, redirects, tee, localRanksFilter), localAddr, elastic);
            }
            if (nodeRank >= nnodes) {
                throw new IllegalArgumentException("--node-rank must be in [0, " + nnodes + ") for --nnodes "
                        + nnodes + ", got " + nodeRank);
            }
            if ((long) nnodes * nproc > Integer.MAX_VALUE) {
                throw new IllegalArgumentException("--nnodes " + nnodes + " times --nproc-per-node " + nproc
                        + " is more ranks than an int holds");
            }
            if (nnodes > 1 && masterPort != null && masterPort == 0) {
                throw new IllegalArgumentException("--master-port 0 (a free port picked by the launcher) works"
                        + " with one node only; with --nnodes " + nnodes + " give every node the same port 1 to 65535");
            }
            if (standalone && (seen.contains("--nnodes") || seen.contains("--master-addr")
                    || seen.contains("--master-port") || seen.contains("--node-rank"))) {
                throw new IllegalArgumentException("--standalone runs one node with its own rendezvous store: leave out"
                        + " --nnodes, --node-rank, --master-addr and --master-port");
            }
            if (maxRestarts > 0 && nnodes > 1) {
                throw new IllegalArgumentException("--max-restarts with several nodes needs the elastic rendezvous,"
                        + " which restarts every node's ranks together: add --rdzv-backend c10d (or hazelcast) and"
                        + " --rdzv-endpoint HOST:PORT, and leave out --node-rank");
            }
            int port = masterPort != null ? masterPort : nnodes > 1 ? DEFAULT_MULTI_NODE_PORT : 0;
            return new LaunchOptions(nproc, nnodes, nodeRank, masterAddr, port, timeout, target, targetArgs, false,
                    classPath, jar != null, maxRestarts, monitorInterval,
                    LaunchLogs.parse(logDir, redirects, tee, localRanksFilter), localAddr, null);
        }

        /**
         * The elastic rendezvous when {@code --nnodes} is a range or a {@code --rdzv-*} option is given (null
         * otherwise); sets {@link #nnodes} for a fixed count.
         */
        private ElasticOptions elastic() {
            int[] range = ElasticOptions.nodeRange(nnodesSpec);
            boolean asked = range[0] != range[1] || rdzvBackend != null || rdzvEndpoint != null || rdzvId != null
                    || rdzvConf != null;
            if (!asked) {
                nnodes = range[0];
                return null;
            }
            if (seen.contains("--node-rank") || standalone) {
                throw new IllegalArgumentException("with the elastic rendezvous (--nnodes MIN:MAX, --rdzv-*) the"
                        + " rendezvous assigns the nodes' ranks: leave out --node-rank and --standalone");
            }
            String endpoint = rdzvEndpoint != null ? rdzvEndpoint
                    : masterAddr + ":" + (masterPort != null ? masterPort : DEFAULT_MULTI_NODE_PORT);
            return ElasticOptions.of(range[0], range[1], rdzvBackend, endpoint, rdzvId, rdzvConf);
        }

        private static Duration seconds(String name, String value) {
            double s;
            try {
                s = Double.parseDouble(value.trim());
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException(name + " must be a number of seconds above 0, got '" + value + "'");
            }
            if (!(s > 0) || s > 3600) {
                throw new IllegalArgumentException(name + " must be a number of seconds above 0 and at most 3600, got "
                        + value);
            }
            return Duration.ofNanos((long) (s * 1e9));
        }

        private static int number(String name, String value, int min, int max) {
            String allowed = max == Integer.MAX_VALUE ? "a whole number >= " + min : min + " to " + max;
            int n;
            try {
                n = Integer.parseInt(value.trim());
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException(name + " must be " + allowed + ", got '" + value + "'");
            }
            if (n < min || n > max) {
                throw new IllegalArgumentException(name + " must be " + allowed + ", got " + n);
            }
            return n;
        }

        private static String nonBlank(String name, String value, String what) {
            if (value.isBlank()) {
                throw new IllegalArgumentException(name + " must be " + what + ", got ''");
            }
            return value.trim();
        }

        private static String address(String value) {
            if (value.isBlank()) {
                throw new IllegalArgumentException("--master-addr must be a host name or address, got ''");
            }
            return value.trim();
        }
    }
}
