package io.tensorbus.workloads.ps;

import io.tensorbus.hazelcast.HazelcastCluster;
import io.tensorbus.workloads.cli.Cli;
import io.tensorbus.workloads.cli.Console;
import io.tensorbus.workloads.cli.HelpOption;
import io.tensorbus.workloads.cli.Launcher;
import io.tensorbus.workloads.cli.LaunchOptions;
import io.tensorbus.workloads.cli.RunCommand;
import io.tensorbus.workloads.demo.ConfigFields;
import io.tensorbus.workloads.demo.FashionMnistTraining;
import io.tensorbus.workloads.demo.WorkerVerticle;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import io.vertx.launcher.application.VertxApplication;
import java.io.IOException;
import java.io.PrintStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.ThreadLocalRandom;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParentCommand;

/**
 * {@code tensorbus run parameter-server [--trainers N] [--ranks-as-threads] [--epochs E] [--data DIR] [--seed S]
 * [--limit N]}: starts the parameter server and N trainers as N + 1 JVMs through {@code tensorbus launch}
 * ({@link Launcher}), or with {@code --ranks-as-threads} as N + 1 rank threads of one JVM,
 * each running {@link ParameterServerVerticle} under Vert.x's {@link VertxApplication}, meeting in a Hazelcast
 * cluster on loopback ports this command found free. Run inside a job that {@code tensorbus launch} started
 * ({@code RANK} is set), it runs this process's worker instead.
 */
@Command(name = ParameterServerCommand.NAME, description = {"a parameter server and N trainers meeting over"
    + " Hazelcast; distributed autograd and the distributed optimizer"})
public final class ParameterServerCommand extends FashionMnistTraining.Flags implements Callable<Integer> {
    /** The workload's name on the command line. */
    public static final String NAME = "parameter-server";

    /** Trainers started when {@code --trainers} is not given. */
    public static final int DEFAULT_TRAINERS = 2;

    private static final int PORT_TRIES = 50;

    @ParentCommand
    private RunCommand run;
    @Mixin
    private HelpOption help;
    @Option(names = "--trainers", paramLabel = "N", description = {"trainers to start, 1 to "
        + (LaunchOptions.MAX_NPROC - 1) + " (default: " + DEFAULT_TRAINERS + "; under tensorbus launch, the job's)"})
    private Integer trainers;
    @Option(names = "--ranks-as-threads", description = {"run the server and the trainers as threads of one JVM, which"
        + " compiles each kernel once for all of them, instead of one process each"})
    private boolean ranksAsThreads;

    /**
     * The parsed command line.
     *
     * @param trainers the trainers to start, or 0 when not given
     * @param training the hyper-parameters and data
     * @param ranksAsThreads true to run the workers as threads of one JVM
     */
    record Args(int trainers, FashionMnistTraining.Options training, boolean ranksAsThreads) {
        /**
         * Parses the options after the workload's name.
         *
         * @throws IllegalArgumentException naming the wrong option and what it allows
         */
        static Args parse(List<String> args) {
            return Cli.parse(new ParameterServerCommand(), args).args();
        }
    }

    /** The options given, checked. */
    Args args() {
        int n = trainers == null ? 0 : Cli.range("--trainers", trainers, 1, LaunchOptions.MAX_NPROC - 1);
        return new Args(n, options(), ranksAsThreads);
    }

    @Override
    public Integer call() {
        Console console = run.console();
        return run(args(), console.env(), console.out(), console.err());
    }

    /**
     * Runs the workload with {@code args} (the options after its name).
     *
     * @param env this process's environment: with {@code RANK} set, this process is one worker of a launched job
     * @return the exit status: 0 when every worker succeeded, the launcher's status otherwise
     * @throws IllegalArgumentException for bad options (the caller prints the usage)
     */
    public static int run(List<String> args, Map<String, String> env, PrintStream out, PrintStream err) {
        return run(Args.parse(args), env, out, err);
    }

    private static int run(Args a, Map<String, String> env, PrintStream out, PrintStream err) {
        if (a.training().dataDir() != null && !a.training().dataDir().toFile().isDirectory()) {
            throw new IllegalArgumentException("--data " + a.training().dataDir() + " is not a directory; give one"
                    + " holding the Fashion-MNIST files");
        }
        JsonObject config = ConfigFields.trainingJson(a.training());
        if (env.get("RANK") != null) {
            if (a.trainers() != 0 && !Integer.toString(a.trainers() + 1).equals(env.get("WORLD_SIZE"))) {
                throw new IllegalArgumentException("--trainers " + a.trainers() + " disagrees with WORLD_SIZE="
                        + env.get("WORLD_SIZE") + " (the server and the trainers); leave --trainers out under"
                        + " tensorbus launch");
            }
            LaunchOptions.refuseRanksAsThreadsInsideAJob(a.ranksAsThreads());
            return runWorker(config, env, out, err);
        }
        int trainers = a.trainers() == 0 ? DEFAULT_TRAINERS : a.trainers();
        int port = freePortRange(HazelcastCluster.PORT_COUNT);
        config.put("cluster", "tensorbus-ps-" + port).put("clusterPort", port);
        return Launcher.run(launchArgs(trainers + 1, a.ranksAsThreads(), config), out, err);
    }

    /**
     * {@code tensorbus launch}'s arguments: N processes of VertxApplication deploying the verticle, or one process
     * running N of them as threads.
     */
    static List<String> launchArgs(int nproc, boolean ranksAsThreads, JsonObject config) {
        return LaunchOptions.jobArgs(nproc, ranksAsThreads, List.of(VertxApplication.class.getName(),
                ParameterServerVerticle.class.getName(), "-conf", config.encode()));
    }

    /** Runs one worker in this process on a fresh Vert.x and waits for it to end; returns 0 or the failed status. */
    static int runWorker(JsonObject config, Map<String, String> env, PrintStream out, PrintStream err) {
        return WorkerVerticle.<ParameterServerWorker.Result>runHere(NAME,
                done -> new ParameterServerVerticle(done, out, env), Vertx::vertx, config, err);
    }

    /**
     * The first of {@code count} consecutive loopback ports that were all free a moment ago, for the Hazelcast
     * members (which take the first free port of their range, so a port taken meanwhile only shifts them).
     *
     * @throws IllegalStateException when no such range was found
     */
    static int freePortRange(int count) {
        for (int attempt = 0; attempt < PORT_TRIES; attempt++) {
            int first = 20_000 + count * ThreadLocalRandom.current().nextInt(40_000 / count);
            if (allFree(first, count)) {
                return first;
            }
        }
        throw new IllegalStateException("found no " + count + " consecutive free loopback ports for the Hazelcast"
                + " cluster in " + PORT_TRIES + " tries");
    }

    private static boolean allFree(int first, int count) {
        List<ServerSocket> held = new ArrayList<>();
        try {
            for (int p = first; p < first + count; p++) {
                held.add(new ServerSocket(p, 1, InetAddress.getLoopbackAddress()));
            }
            return true;
        } catch (IOException e) {
            return false;
        } finally {
            for (ServerSocket s : held) {
                try {
                    s.close();
                } catch (IOException e) {
                    // Closing a socket nobody used cannot matter.
                }
            }
        }
    }
}
