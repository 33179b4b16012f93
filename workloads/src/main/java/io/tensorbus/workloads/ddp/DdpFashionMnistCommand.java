package io.tensorbus.workloads.ddp;

import io.tensorbus.data.FashionMnist;
import io.tensorbus.distributed.Distributed;
import io.tensorbus.workloads.cli.Cli;
import io.tensorbus.workloads.cli.Console;
import io.tensorbus.workloads.cli.HelpOption;
import io.tensorbus.workloads.cli.Launcher;
import io.tensorbus.workloads.cli.LaunchOptions;
import io.tensorbus.workloads.cli.RunCommand;
import io.tensorbus.workloads.demo.ConfigFields;
import io.tensorbus.workloads.demo.FashionMnistTraining;
import io.tensorbus.workloads.demo.WorkerVerticle;
import io.vertx.core.json.JsonObject;
import io.vertx.launcher.application.VertxApplication;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParentCommand;

/**
 * {@code tensorbus run ddp-fashion-mnist [--nproc N] [--ranks-as-threads] [--epochs E] [--data DIR] [--seed S]
 * [--limit N] [--comm-hook allreduce|fp16|bf16|powersgd] [--powersgd-rank R] [--powersgd-start STEP]}: starts
 * N rank JVMs through {@code tensorbus launch} ({@link Launcher}), each running
 * {@link DdpFashionMnistVerticle} under Vert.x's {@link VertxApplication} with the options as its JSON config, or
 * with {@code --ranks-as-threads} one JVM running the N verticles as threads.
 * Run inside a job that {@code tensorbus launch} started ({@code RANK} is set), as in
 * {@code tensorbus launch --nproc-per-node 2 ddp-fashion-mnist}, it runs this process's rank instead.
 */
@Command(name = DdpFashionMnistCommand.NAME, description = {"the tutorial network trained on Fashion-MNIST with"
    + " DDP, one process per rank (the main job)"})
public final class DdpFashionMnistCommand extends FashionMnistTraining.Flags implements Callable<Integer> {
    /** The workload's name on the command line. */
    public static final String NAME = "ddp-fashion-mnist";

    /** Processes started when {@code --nproc} is not given. */
    public static final int DEFAULT_NPROC = 2;

    @ParentCommand
    private RunCommand run;
    @Mixin
    private HelpOption help;
    @Mixin
    private CommHookChoice.Flags commHook = new CommHookChoice.Flags();
    @Mixin
    private FashionMnistTraining.DeviceFlag device = new FashionMnistTraining.DeviceFlag();
    @Option(names = "--nproc", paramLabel = "N", description = {"processes to start, 1 to " + LaunchOptions.MAX_NPROC
        + " (default: " + DEFAULT_NPROC + "; under tensorbus launch, the job's)"})
    private Integer nproc;
    @Option(names = "--ranks-as-threads", description = {"run the ranks as threads of one JVM, which compiles each"
        + " kernel once for all of them, instead of one process each"})
    private boolean ranksAsThreads;
    @Option(names = "--checkpoint-dir", paramLabel = "DIR",
            description = "where checkpoints are saved each epoch and resumed from (default: none)")
    private String checkpointDir;

    /**
     * The parsed command line.
     *
     * @param nproc the processes to start, or 0 when not given
     * @param training the hyper-parameters and data
     * @param commHook DDP's communication hook
     * @param checkpointDir where checkpoints are saved and resumed from, or null
     * @param ranksAsThreads true to run the ranks as threads of one JVM
     */
    record Args(int nproc, FashionMnistTraining.Options training, CommHookChoice commHook, String checkpointDir,
            boolean ranksAsThreads) {
        /**
         * Parses the options after the workload's name.
         *
         * @throws IllegalArgumentException naming the wrong option and what it allows
         */
        static Args parse(List<String> args) {
            return Cli.parse(new DdpFashionMnistCommand(), args).args();
        }
    }

    /** The options given, checked. */
    Args args() {
        if (checkpointDir != null && checkpointDir.isBlank()) {
            throw new IllegalArgumentException("--checkpoint-dir needs a directory");
        }
        int n = nproc == null ? 0 : Cli.range("--nproc", nproc, 1, LaunchOptions.MAX_NPROC);
        return new Args(n, options().onDevice(device.device()), commHook.choice(), checkpointDir, ranksAsThreads);
    }

    @Override
    public Integer call() {
        Console console = run.console();
        return run(args(), console.env(), console.out(), console.err());
    }

    /**
     * Runs the workload with {@code args} (the options after its name).
     *
     * @param env this process's environment: with {@code RANK} set, this process is one rank of a launched job
     * @return the exit status: 0 when every rank succeeded, the launcher's status otherwise
     * @throws IllegalArgumentException for bad options (the caller prints the usage)
     */
    public static int run(List<String> args, Map<String, String> env, PrintStream out, PrintStream err) {
        return run(Args.parse(args), env, out, err);
    }

    private static int run(Args a, Map<String, String> env, PrintStream out, PrintStream err) {
        Path data = a.training().dataDir();
        if (data != null && !Files.isDirectory(data)) {
            // Said once here rather than by every rank after its JVM started.
            throw new IllegalArgumentException("--data " + data + " is not a directory; give one holding the"
                    + " Fashion-MNIST files (Debian's dataset-fashion-mnist: " + FashionMnist.DEBIAN_DIR + ")");
        }
        JsonObject config = ConfigFields.trainingJson(a.training()).mergeIn(a.commHook().toJson());
        if (a.checkpointDir() != null) {
            config.put("checkpointDir", a.checkpointDir());
        }
        if (env.get("RANK") != null) {
            checkNprocMatches(a.nproc(), env);
            LaunchOptions.refuseRanksAsThreadsInsideAJob(a.ranksAsThreads());
            return runRank(config, env, out, err);
        }
        return Launcher.run(launchArgs(a.nproc() == 0 ? DEFAULT_NPROC : a.nproc(), a.ranksAsThreads(), config), out,
                err);
    }

    /**
     * {@code tensorbus launch}'s arguments: N processes of VertxApplication deploying the verticle, or one process
     * running N of them as threads.
     */
    static List<String> launchArgs(int nproc, boolean ranksAsThreads, JsonObject config) {
        return LaunchOptions.jobArgs(nproc, ranksAsThreads, List.of(VertxApplication.class.getName(),
                DdpFashionMnistVerticle.class.getName(), "-conf", config.encode()));
    }

    private static void checkNprocMatches(int nproc, Map<String, String> env) {
        if (nproc != 0 && !Integer.toString(nproc).equals(env.get("WORLD_SIZE"))) {
            throw new IllegalArgumentException("--nproc " + nproc + " disagrees with WORLD_SIZE="
                    + env.get("WORLD_SIZE")
                    + " of the job this process belongs to; leave --nproc out under tensorbus launch");
        }
    }

    /**
     * Runs one rank in this process: deploys the verticle on a fresh Vert.x instance and waits for training
     * to end.
     *
     * @return 0 on success, {@link DdpFashionMnistVerticle#FAILED_EXIT} on failure (the reason goes to {@code err})
     */
    static int runRank(JsonObject config, Map<String, String> env, PrintStream out, PrintStream err) {
        return WorkerVerticle.<DdpFashionMnistTraining.Result>runHere(NAME,
                done -> new DdpFashionMnistVerticle(done, out, env), Distributed::newVertx, config, err);
    }
}
