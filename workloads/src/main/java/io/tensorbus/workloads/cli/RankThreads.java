package io.tensorbus.workloads.cli;

import io.tensorbus.workloads.demo.WorkerVerticle;
import io.vertx.launcher.application.VertxApplication;
import java.io.PrintStream;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorCompletionService;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

/**
 * The one JVM of a node whose ranks run as threads ({@code tensorbus launch --ranks-as-threads}): runs the target
 * once per local rank, each on a platform thread of its own with its own environment ({@code RANK},
 * {@code LOCAL_RANK}; the rest is the node's), its own Vert.x and its own output, every line prefixed
 * {@code [rank R] }. The target is {@link Main} with a workload ({@code Main run NAME ...}), or Vert.x's
 * {@code VertxApplication} with a {@link WorkerVerticle} and its {@code -conf} ({@link RankVerticle}). The ranks
 * share the JIT's compiled code, the classes and the tensor cache; their groups meet through the job's store as
 * separate processes would.
 *
 * <p>The launcher starts this JVM with the environment of the node's first rank and {@code LOCAL_WORLD_SIZE} ranks to
 * run. When a rank fails, the node's job ends at once with its status, as when one of several processes fails: the
 * launcher then stops the other nodes.
 */
public final class RankThreads {
    private RankThreads() {
    }

    /** Runs the node's ranks and exits with 0 when all succeeded, else with the first failure's status. */
    public static void main(String[] args) {
        System.exit(run(List.of(args), System.getenv(), System.out, System.err));
    }

    /**
     * Runs {@code LOCAL_WORLD_SIZE} ranks of the workload {@code args} names, starting at {@code RANK} of {@code env},
     * and returns when all ended or the first failed.
     *
     * @return 0 when every rank returned 0; the first non-zero status otherwise; {@link Cli#USAGE} when {@code env}
     *     does not describe a node
     */
    static int run(List<String> args, Map<String, String> env, PrintStream out, PrintStream err) {
        int first;
        int ranks;
        try {
            first = number(env, "RANK");
            ranks = number(env, "LOCAL_WORLD_SIZE");
        } catch (IllegalArgumentException e) {
            err.println("tensorbus: ranks as threads: " + e.getMessage());
            return Cli.USAGE;
        }
        ExecutorService threads = Executors.newThreadPerTaskExecutor(Thread.ofPlatform().name("tensorbus-rank-", first)
                .factory());
        try {
            ExecutorCompletionService<Integer> ended = new ExecutorCompletionService<>(threads);
            List<PrintStream> streams = new ArrayList<>();
            for (int local = 0; local < ranks; local++) {
                int rank = first + local;
                PrintStream rankOut = LaunchOutput.prefixed(out, "[rank " + rank + "] ");
                PrintStream rankErr = LaunchOutput.prefixed(err, "[rank " + rank + "] ");
                streams.add(rankOut);
                streams.add(rankErr);
                Console console = new Console(rankOut, rankErr, rankEnvironment(env, rank, local));
                ended.submit(() -> runRank(args, console));
            }
            int status = await(ended, ranks, err);
            streams.forEach(PrintStream::close);
            return status;
        } finally {
            // The ranks still running after a failure are left to the exit that follows.
            threads.shutdownNow();
        }
    }

    /** Runs one rank of the target {@code args} names; its exit status. */
    private static int runRank(List<String> args, Console console) {
        String main = args.isEmpty() ? "" : args.getFirst();
        List<String> rest = args.subList(Math.min(1, args.size()), args.size());
        if (main.equals(Main.class.getName())) {
            return TensorbusCommand.execute(console, rest.toArray(String[]::new));
        }
        if (main.equals(VertxApplication.class.getName())) {
            return RankVerticle.run(rest, console);
        }
        console.err().println("tensorbus: ranks as threads run " + Main.class.getName() + " or "
                + VertxApplication.class.getName() + ", not '" + main + "'");
        return Cli.USAGE;
    }

    /** Waits for the ranks in the order they end: the first non-zero status ends the wait. */
    private static int await(ExecutorCompletionService<Integer> ended, int ranks, PrintStream err) {
        for (int i = 0; i < ranks; i++) {
            int status;
            try {
                status = statusOf(ended.take());
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return Launcher.INTERRUPTED_EXIT;
            }
            if (status != 0) {
                return status;
            }
        }
        return 0;
    }

    private static int statusOf(Future<Integer> rank) throws InterruptedException {
        try {
            return rank.get();
        } catch (ExecutionException e) {
            // TensorbusCommand turns a workload's failures into a status; what escapes is a bug, said as it is.
            e.getCause().printStackTrace();
            return 1;
        }
    }

    /** The environment of local rank {@code local}: the node's, with its own {@code RANK} and {@code LOCAL_RANK}. */
    static Map<String, String> rankEnvironment(Map<String, String> node, int rank, int local) {
        Map<String, String> env = new HashMap<>(node);
        env.put("RANK", Integer.toString(rank));
        env.put("LOCAL_RANK", Integer.toString(local));
        return env;
    }

    private static int number(Map<String, String> env, String name) {
        String value = env.get(name);
        try {
            int n = Integer.parseInt(value == null ? "" : value.trim());
            if (n >= 0 && (n > 0 || name.equals("RANK"))) {
                return n;
            }
        } catch (NumberFormatException e) {
            // Said below.
        }
        throw new IllegalArgumentException(name + "='" + value + "' must be a " + (name.equals("RANK")
                ? "rank, 0 or more" : "number of ranks, 1 or more") + "; run it through tensorbus launch"
                + " --ranks-as-threads, which sets it");
    }
}
