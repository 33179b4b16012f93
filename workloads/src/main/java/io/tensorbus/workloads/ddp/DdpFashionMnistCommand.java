package io.tensorbus.workloads.ddp;

import io.tensorbus.data.FashionMnist;
import io.tensorbus.distributed.Distributed;
import io.tensorbus.workloads.cli.Launcher;
import io.tensorbus.workloads.cli.LaunchOptions;
import io.tensorbus.workloads.demo.ConfigFields;
import io.tensorbus.workloads.demo.FashionMnistTraining;
import io.tensorbus.workloads.demo.WorkerVerticle;
import io.vertx.core.json.JsonObject;
import io.vertx.launcher.application.VertxApplication;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * {@code tensorbus run ddp-fashion-mnist [--nproc N] [--epochs E] [--data DIR] [--seed S] [--limit N]
 * [--comm-hook allreduce|fp16|bf16|powersgd] [--powersgd-rank R] [--powersgd-start STEP]}: starts
 * N rank JVMs through {@code tensorbus launch} ({@link Launcher}), each running
 * {@link DdpFashionMnistVerticle} under Vert.x's {@link VertxApplication} with the options as its JSON config.
 * Run inside a job that {@code tensorbus launch} started ({@code RANK} is set), as in
 * {@code tensorbus launch --nproc-per-node 2 ddp-fashion-mnist}, it runs this process's rank instead.
 */
public final class DdpFashionMnistCommand {
    /** The workload's name on the command line. */
    public static final String NAME = "ddp-fashion-mnist";

    /** The usage of its options. */
    public static final String USAGE = NAME + " [--nproc N] [--epochs E] [--data DIR] [--seed S] [--limit N] "
            + CommHookChoice.USAGE + " [--checkpoint-dir DIR]";

    /** Processes started when {@code --nproc} is not given. */
    public static final int DEFAULT_NPROC = 2;

    /**
     * The parsed command line.
     *
     * @param nproc the processes to start, or 0 when not given
     * @param training the hyper-parameters and data
     * @param commHook DDP's communication hook
     * @param checkpointDir where checkpoints are saved and resumed from, or null
     */
    record Args(int nproc, FashionMnistTraining.Options training, CommHookChoice commHook, String checkpointDir) {
        /**
         * Parses the options after the workload's name.
         *
         * @throws IllegalArgumentException naming the wrong option and what it allows
         */
        static Args parse(List<String> args) {
            int nproc = 0;
            List<String> rest = new ArrayList<>();
            List<String> others = new ArrayList<>();
            CommHookChoice commHook = CommHookChoice.parse(args, others);
            String checkpointDir = null;
            for (int i = 0; i < others.size(); i++) {
                if (others.get(i).equals("--checkpoint-dir")) {
                    if (i + 1 >= others.size() || others.get(i + 1).isBlank()) {
                        throw new IllegalArgumentException("--checkpoint-dir needs a directory");
                    }
                    checkpointDir = others.get(++i);
                    continue;
                }
                if (!others.get(i).equals("--nproc")) {
                    rest.add(others.get(i));
                    continue;
                }
                if (i + 1 >= others.size()) {
                    throw new IllegalArgumentException("--nproc needs a value: the processes to start, 1 to "
                            + LaunchOptions.MAX_NPROC);
                }
                nproc = nproc(others.get(++i));
            }
            return new Args(nproc, FashionMnistTraining.Options.parse(rest, USAGE), commHook, checkpointDir);
        }

        private static int nproc(String value) {
            try {
                int n = Integer.parseInt(value.trim());
                if (n >= 1 && n <= LaunchOptions.MAX_NPROC) {
                    return n;
                }
            } catch (NumberFormatException e) {
                // Reported below with what is allowed.
            }
            throw new IllegalArgumentException("--nproc must be a whole number from 1 to " + LaunchOptions.MAX_NPROC
                    + ", got '" + value + "'");
        }
    }

    private DdpFashionMnistCommand() {
    }

    /**
     * Runs the workload with {@code args} (the options after its name).
     *
     * @param env this process's environment: with {@code RANK} set, this process is one rank of a launched job
     * @return the exit status: 0 when every rank succeeded, the launcher's status otherwise
     * @throws IllegalArgumentException for bad options (the caller prints the usage)
     */
    public static int run(List<String> args, Map<String, String> env, PrintStream out, PrintStream err) {
        Args a = Args.parse(args);
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
            return runRank(config, env, out, err);
        }
        return Launcher.run(launchArgs(a.nproc() == 0 ? DEFAULT_NPROC : a.nproc(), config), out, err);
    }

    /** {@code tensorbus launch}'s arguments: N processes of VertxApplication deploying the verticle. */
    static List<String> launchArgs(int nproc, JsonObject config) {
        return List.of("--nproc-per-node", Integer.toString(nproc), VertxApplication.class.getName(),
                DdpFashionMnistVerticle.class.getName(), "-conf", config.encode());
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
