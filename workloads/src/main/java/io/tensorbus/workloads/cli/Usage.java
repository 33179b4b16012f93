package io.tensorbus.workloads.cli;

import java.io.PrintStream;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.stream.Collectors;

/**
 * The {@code tensorbus} command line's usage, by command and by workload: {@code tensorbus help} prints all of it,
 * {@code tensorbus COMMAND --help} (and {@code run WORKLOAD --help}, {@code bench SUITE --help}) the part of that
 * command, and a usage error its reason and one line that points at the command's {@code --help}.
 */
final class Usage {
    /** The workloads of {@code tensorbus run}, each with its options. */
    static final Map<String, String> WORKLOADS = new LinkedHashMap<>();
    /** Each command's lines in the whole usage. */
    static final Map<String, String> COMMANDS = new LinkedHashMap<>();

    private static final String INDENT = " ".repeat(31);

    static {
        WORKLOADS.put("ddp-fashion-mnist", String.join("\n", "ddp-fashion-mnist [--nproc N] [--epochs N] [--data DIR]",
                "  [--seed S] [--limit N]", "  [--comm-hook allreduce|fp16|bf16|powersgd]",
                "  [--powersgd-rank R] [--powersgd-start STEP]", "  [--checkpoint-dir DIR]",
                "  (N processes, default 2, training with DDP)"));
        WORKLOADS.put("parameter-server", String.join("\n", "parameter-server [--trainers N] [--epochs N] [--data DIR]",
                "  [--seed S] [--limit N]", "  (a server and N trainers, default 2, meeting over",
                "  Hazelcast; distributed autograd and optimizer)"));
        WORKLOADS.put("pipeline-resnet50", String.join("\n", "pipeline-resnet50 [--micro-batches 1,2,4,8] [--batch B]",
                "  [--img PX] [--batches N] [--schedule gpipe|1f1b]",
                "  (the seed's ResNet50 in two shards over RPC; seconds", "  per batch for each micro-batch count)"));
        WORKLOADS.put("local-demo", String.join("\n", "local-demo [--epochs N] [--data DIR] [--seed S] [--limit N]",
                "  (one process, no communication: the model and data alone)"));

        COMMANDS.put("info", "  info                         JDK, processors, Vector API width, tensorbus version");
        COMMANDS.put("bench", """
                  bench SUITE [--json FILE]    run a benchmark suite; one line per measurement
                """ + lines("(SUITE NAME key=value ...), also written as JSON to FILE", "suites: tensor, nn,",
                "p2p [--max-bytes B] [--jit-warmup ROUNDS],",
                "collectives [--world N] [--ops allreduce,broadcast,allgather]",
                "  [--max-bytes B] [--jit-warmup ROUNDS] [--backend tcp|opencl|nccl]",
                "  [--device cpu|opencl[:N]|cuda[:N]] (default: the backend's; ranks share",
                "  a device when there are fewer than ranks)",
                "ddp [--world N] [--warmup W] [--steps S],", "rpc [--jit-warmup CALLS] [--max-bytes B],",
                "dist-autograd [--jit-warmup STEPS],", "pipeline [--batch B] [--img PX] [--batches N]",
                "  [--micro-batches 1,2,4,8]", "zero [--world N] (ZeroRedundancyOptimizer's Adam state",
                "  per rank on ResNet-50, ranks as threads)",
                "soak [--world N] [--iterations N] [--rpc-calls N] [--max-bytes B]",
                "  [--sample-every N] [--warmup N] [--parts collectives,rpc]",
                "  [--memory-scope true|false]",
                "  (long runs, every result checked; memory sampled)",
                "(p2p, collectives, ddp, rpc, dist-autograd, pipeline and", "soak run one JVM per rank)"));
        COMMANDS.put("launch", """
                  launch --nproc-per-node N [--nnodes M --node-rank K --master-addr A --master-port P]
                         [--timeout SECONDS] [--classpath PATH] TARGET [args] | -jar APP.jar [args]
                """ + lines("start N processes of TARGET (your main class, a workload",
                "name, or your jar) with RANK, WORLD_SIZE, MASTER_ADDR and",
                "the job's secret set, as torchrun (launch --help for details)"));
        COMMANDS.put("secret", """
                  secret                       print a new random job secret, for TENSORBUS_SECRET or a
                """ + lines("file named by TENSORBUS_SECRET_FILE (jobs across machines)"));
        COMMANDS.put("run", "  run WORKLOAD [options]       run a workload; workloads:\n"
                + WORKLOADS.values().stream().map(w -> w.indent(INDENT.length()).stripTrailing())
                        .collect(Collectors.joining("\n")));
        COMMANDS.put("fr-trace", """
                  fr-trace DIR                 read the flight-recorder dumps in DIR (one per rank, written on
                """ + lines("a failure when TENSORBUS_FLIGHT_RECORDER_DIR is set) and name",
                "the ranks and the collective where they part; exit 1 when", "they do"));
        COMMANDS.put("help", "  help                         this text; COMMAND --help, run WORKLOAD --help: theirs");
    }

    private Usage() {
    }

    /** The whole usage, every command. */
    static String all() {
        return "usage: tensorbus COMMAND [options]\n" + String.join("\n", COMMANDS.values());
    }

    /** The usage of {@code command}, or null for an unknown command. */
    static String of(String command) {
        String lines = COMMANDS.get(command);
        return lines == null ? null : "usage: tensorbus COMMAND [options]\n" + lines;
    }

    /** The usage of workload {@code name}, or null for an unknown workload. */
    static String ofWorkload(String name) {
        String lines = WORKLOADS.get(name);
        return lines == null ? null : "usage: tensorbus run " + lines.replace("\n  ", "\n" + " ".repeat(23));
    }

    /** True when {@code args} ask for help ({@code --help} or {@code -h}). */
    static boolean asksForHelp(Iterable<String> args) {
        for (String a : args) {
            if (a.equals("--help") || a.equals("-h")) {
                return true;
            }
        }
        return false;
    }

    /**
     * Prints a usage error: "tensorbus: PROBLEM", then one line naming where the usage is; returns the usage exit
     * status.
     *
     * @param help the command whose {@code --help} to point at ("run ddp-fashion-mnist"), or null for the whole
     */
    static int error(PrintStream err, String problem, String help) {
        err.println("tensorbus: " + problem);
        err.println(help == null ? "(tensorbus help lists the commands and their options)"
                : "(tensorbus " + help + " --help shows its options)");
        return Main.USAGE;
    }

    /** The first line, then the others indented to the usage's description column. */
    private static String lines(String first, String... more) {
        StringBuilder b = new StringBuilder(INDENT).append(first);
        for (String m : more) {
            b.append('\n').append(INDENT).append(m);
        }
        return b.toString();
    }
}
