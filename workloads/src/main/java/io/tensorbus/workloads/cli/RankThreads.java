package io.tensorbus.workloads.cli;

import io.tensorbus.internal.distributed.RankEnvironment;
import io.tensorbus.workloads.demo.WorkerVerticle;
import io.vertx.launcher.application.VertxApplication;
import java.io.OutputStream;
import java.io.PrintStream;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.nio.charset.StandardCharsets;
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
 * {@code [rank R] }. The target is {@link Main} with a workload ({@code Main run NAME ...}), Vert.x's
 * {@code VertxApplication} with a {@link WorkerVerticle} and its {@code -conf} ({@link RankVerticle}), or any main
 * class that reads its rank through {@link io.tensorbus.distributed.Distributed#environment()} (as {@code env://}
 * does) rather than {@link System#getenv()}; a main that calls {@link System#exit} ends every rank of the node. The
 * ranks share the JIT's compiled code, the classes and the tensor cache; their groups meet through the job's store
 * as separate processes would.
 *
 * <p>The launcher starts this JVM with the environment of the node's first rank and {@code LOCAL_WORLD_SIZE} ranks to
 * run. When a rank fails, the node's job ends at once with its status, as when one of several processes fails: the
 * launcher then stops the other nodes.
 */
public final class RankThreads {
    private RankThreads() {
    }

    /** The output and error streams of the rank whose thread (or a thread it started) this is; null elsewhere. */
    private static final InheritableThreadLocal<PrintStream[]> RANK_STREAMS = new InheritableThreadLocal<>();

    /**
     * Runs the node's ranks and exits with 0 when all succeeded, else with the first failure's status. What a rank
     * writes to {@link System#out} and {@link System#err} goes to its own prefixed streams.
     */
    public static void main(String[] args) {
        PrintStream out = System.out;
        PrintStream err = System.err;
        System.setOut(byRank(out, 0));
        System.setErr(byRank(err, 1));
        System.exit(run(List.of(args), System.getenv(), out, err));
    }

    /**
     * A stream that passes what a rank's thread writes to that rank's stream {@code which} (0: out, 1: err), and what
     * any other thread writes to {@code process}.
     */
    private static PrintStream byRank(PrintStream process, int which) {
        return new PrintStream(new OutputStream() {
            @Override
            public void write(int b) {
                target().write(b);
            }

            @Override
            public void write(byte[] b, int off, int len) {
                target().write(b, off, len);
            }

            @Override
            public void flush() {
                target().flush();
            }

            private PrintStream target() {
                PrintStream[] rank = RANK_STREAMS.get();
                return rank != null ? rank[which] : process;
            }
        }, true, StandardCharsets.UTF_8);
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
        // Daemons: this thread waits for them, and those still running after a failure must not hold the JVM.
        ExecutorService threads = Executors.newThreadPerTaskExecutor(Thread.ofPlatform().daemon()
                .name("tensorbus-rank-", first).factory());
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
                ended.submit(() -> {
                    RANK_STREAMS.set(new PrintStream[] {rankOut, rankErr});
                    return runRank(args, console);
                });
            }
            int status = await(ended, ranks, err);
            streams.forEach(PrintStream::close);
            return status;
        } finally {
            // The ranks still running after a failure are left to the exit that follows.
            threads.shutdownNow();
        }
    }

    /**
     * Runs one rank of the target {@code args} names with {@code console}'s environment as the thread's
     * ({@link RankEnvironment}); its exit status.
     */
    private static int runRank(List<String> args, Console console) throws Exception {
        String main = args.isEmpty() ? "" : args.getFirst();
        List<String> rest = args.subList(Math.min(1, args.size()), args.size());
        return RankEnvironment.call(console.env(), () -> {
            if (main.equals(Main.class.getName())) {
                return TensorbusCommand.execute(console, rest.toArray(String[]::new));
            }
            if (main.equals(VertxApplication.class.getName())) {
                return RankVerticle.run(rest, console);
            }
            return runMain(main, rest, console);
        });
    }

    /**
     * Runs the {@code main} of the class {@code name} as one rank: 0 when it returns, 1 when it throws (its stack
     * trace goes to the rank's error stream, as the JVM prints it for a process), {@link Cli#USAGE} when there is no
     * such {@code public static void main(String[])}.
     */
    private static int runMain(String name, List<String> args, Console console) {
        Method main;
        try {
            main = Class.forName(name, true, ClassLoader.getSystemClassLoader()).getMethod("main", String[].class);
        } catch (ClassNotFoundException | LinkageError | NoSuchMethodException e) {
            console.err().println("tensorbus: ranks as threads: no public static void main(String[]) in '" + name
                    + "': " + e);
            return Cli.USAGE;
        }
        try {
            main.invoke(null, (Object) args.toArray(String[]::new));
            return 0;
        } catch (InvocationTargetException e) {
            console.err().print("Exception in thread \"" + Thread.currentThread().getName() + "\" ");
            e.getCause().printStackTrace(console.err());
            return 1;
        } catch (IllegalAccessException | IllegalArgumentException e) {
            console.err().println("tensorbus: ranks as threads: cannot call " + name + ".main: " + e);
            return Cli.USAGE;
        }
    }

    /** Waits for the ranks in the order they end: the first non-zero status ends the wait. */
    private static int await(ExecutorCompletionService<Integer> ended, int ranks, PrintStream err) {
        for (int i = 0; i < ranks; i++) {
            int status;
            try {
                status = statusOf(ended.take(), err);
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

    private static int statusOf(Future<Integer> rank, PrintStream err) throws InterruptedException {
        try {
            return rank.get();
        } catch (ExecutionException e) {
            // TensorbusCommand turns a workload's failures into a status; what escapes is a bug, said as it is.
            e.getCause().printStackTrace(err);
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
