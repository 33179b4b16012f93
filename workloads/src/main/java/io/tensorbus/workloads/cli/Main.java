package io.tensorbus.workloads.cli;

import io.tensorbus.c10d.JobSecret;
import io.tensorbus.distributed.FlightRecorderTrace;
import io.tensorbus.tensor.CpuInfo;
import io.tensorbus.workloads.bench.CollectivesBench;
import io.tensorbus.workloads.bench.DdpBench;
import io.tensorbus.workloads.bench.DistAutogradBench;
import io.tensorbus.workloads.bench.Measurement;
import io.tensorbus.workloads.bench.NnBench;
import io.tensorbus.workloads.bench.P2pBench;
import io.tensorbus.workloads.bench.PipelineBench;
import io.tensorbus.workloads.bench.RpcBench;
import io.tensorbus.workloads.bench.TensorBench;
import io.tensorbus.workloads.bench.ZeroBench;
import io.tensorbus.workloads.ddp.DdpFashionMnistCommand;
import io.tensorbus.workloads.demo.FashionMnistTraining;
import io.tensorbus.workloads.pipeline.PipelineResNet50Command;
import io.tensorbus.workloads.ps.ParameterServerCommand;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.function.Consumer;
import java.util.function.IntSupplier;

/**
 * The {@code tensorbus} command line (run by the {@code ./tensorbus} script): {@code info},
 * {@code bench SUITE [--json FILE]}, {@code run WORKLOAD [options]}, {@code launch ...} ({@link Launcher}) and
 * {@code secret} (a new random job secret).
 * Bad usage prints the usage and exits with status 2.
 */
public final class Main {
    /** Exit status for bad usage, as most Unix tools. */
    static final int USAGE = 2;

    private static final String USAGE_TEXT = """
            usage: tensorbus COMMAND [options]
              info                         JDK, processors, Vector API width, tensorbus version
              bench SUITE [--json FILE]    run a benchmark suite; one line per measurement
                                           (SUITE NAME key=value ...), also written as JSON to FILE
                                           suites: tensor, nn,
                                           p2p [--max-bytes B] [--jit-warmup ROUNDS],
                                           collectives [--world N] [--ops allreduce,broadcast,allgather]
                                             [--max-bytes B] [--jit-warmup ROUNDS]
                                           ddp [--world N] [--warmup W] [--steps S],
                                           rpc [--jit-warmup CALLS] [--max-bytes B],
                                           dist-autograd [--jit-warmup STEPS],
                                           pipeline [--batch B] [--img PX] [--batches N]
                                             [--micro-batches 1,2,4,8]
                                           zero [--world N] (ZeroRedundancyOptimizer's Adam state
                                             per rank on ResNet-50, ranks as threads)
                                           (p2p, collectives, ddp, rpc, dist-autograd and pipeline
                                           run one JVM per rank)
              launch --nproc-per-node N [--nnodes M --node-rank K --master-addr A --master-port P]
                     [--timeout SECONDS] [--classpath PATH] TARGET [args] | -jar APP.jar [args]
                                           start N processes of TARGET (your main class, a workload
                                           name, or your jar) with RANK, WORLD_SIZE, MASTER_ADDR and
                                           the job's secret set, as torchrun (launch --help for details)
              secret                       print a new random job secret, for TENSORBUS_SECRET or a
                                           file named by TENSORBUS_SECRET_FILE (jobs across machines)
              run WORKLOAD [options]       run a workload; workloads:
                                           ddp-fashion-mnist [--nproc N] [--epochs N] [--data DIR]
                                             [--seed S] [--limit N]
                                             [--comm-hook allreduce|fp16|bf16|powersgd]
                                             [--powersgd-rank R] [--powersgd-start STEP]
                                             [--checkpoint-dir DIR]
                                             (N processes, default 2, training with DDP)
                                           parameter-server [--trainers N] [--epochs N] [--data DIR]
                                             [--seed S] [--limit N]
                                             (a server and N trainers, default 2, meeting over
                                             Hazelcast; distributed autograd and optimizer)
                                           pipeline-resnet50 [--micro-batches 1,2,4,8] [--batch B]
                                             [--img PX] [--batches N] [--schedule gpipe|1f1b]
                                             (the seed's ResNet50 in two shards over RPC; seconds
                                             per batch for each micro-batch count)
                                           local-demo [--epochs N] [--data DIR] [--seed S] [--limit N]
              fr-trace DIR                 read the flight-recorder dumps in DIR (one per rank, written on
                                           a failure when TENSORBUS_FLIGHT_RECORDER_DIR is set) and name
                                           the ranks and the collective where they part; exit 1 when
                                           they do
              help                         this text""";

    private Main() {
    }

    /** {@code fr-trace DIR}: prints {@link FlightRecorderTrace}'s report; 0 when the ranks agree, 1 when not. */
    private static int frTrace(String[] args, PrintStream out, PrintStream err) {
        if (args.length != 1) {
            return usage(err, "fr-trace needs one directory of flight-recorder dumps");
        }
        try {
            FlightRecorderTrace.Report report = FlightRecorderTrace.analyze(Path.of(args[0]));
            out.println(report.format());
            return report.findings().isEmpty() ? 0 : 1;
        } catch (IOException | IllegalArgumentException e) {
            err.println("tensorbus fr-trace: " + e.getMessage());
            return 1;
        }
    }

    /** Runs the command line and exits with its status. */
    public static void main(String[] args) {
        System.exit(run(args, System.out, System.err));
    }

    /** Runs one command with {@code args}, writing to {@code out} and {@code err}; returns the exit status. */
    public static int run(String[] args, PrintStream out, PrintStream err) {
        if (args.length == 0) {
            return usage(err, "no command given");
        }
        String[] rest = Arrays.copyOfRange(args, 1, args.length);
        return switch (args[0]) {
            case "info" -> {
                Info.print(out);
                yield 0;
            }
            case "bench" -> bench(rest, out, err);
            case "run" -> runWorkload(rest, out, err);
            case "launch" -> Launcher.run(List.of(rest), out, err);
            case "fr-trace" -> frTrace(rest, out, err);
            case "secret" -> {
                out.println(JobSecret.newSecretText());
                yield 0;
            }
            case "help", "-h", "--help" -> {
                out.println(USAGE_TEXT);
                yield 0;
            }
            default -> usage(err, "unknown command '" + args[0] + "'");
        };
    }

    private static int bench(String[] args, PrintStream out, PrintStream err) {
        if (args.length == 0) {
            return usage(err, "bench needs a suite");
        }
        Path json = null;
        List<String> suiteArgs = new ArrayList<>();
        for (int i = 1; i < args.length; i++) {
            if (args[i].equals("--json")) {
                if (i + 1 >= args.length) {
                    return usage(err, "bench: --json needs a file");
                }
                json = Path.of(args[++i]);
            } else {
                suiteArgs.add(args[i]);
            }
        }
        List<Measurement> results = new ArrayList<>();
        Consumer<Measurement> sink = m -> {
            out.println(m.line());
            out.flush();
            results.add(m);
        };
        IntSupplier suite;
        try {
            suite = switch (args[0]) {
                case "tensor" -> {
                    noSuiteArgs(args[0], suiteArgs);
                    yield () -> {
                        new TensorBench().run(sink);
                        return 0;
                    };
                }
                case "nn" -> {
                    noSuiteArgs(args[0], suiteArgs);
                    yield () -> {
                        new NnBench().run(sink);
                        return 0;
                    };
                }
                case "p2p" -> {
                    P2pBench p2p = new P2pBench(P2pBench.Options.parse(suiteArgs));
                    yield () -> p2p.run(sink, err);
                }
                case "collectives" -> {
                    CollectivesBench collectives = new CollectivesBench(CollectivesBench.Options.parse(suiteArgs));
                    yield () -> collectives.run(sink, err);
                }
                case "ddp" -> {
                    DdpBench ddp = new DdpBench(DdpBench.Options.parse(suiteArgs));
                    yield () -> ddp.run(sink, err);
                }
                case "rpc" -> {
                    RpcBench rpc = new RpcBench(RpcBench.Options.parse(suiteArgs));
                    yield () -> rpc.run(sink, err);
                }
                case "pipeline" -> {
                    PipelineBench pipeline = new PipelineBench(suiteArgs);
                    yield () -> pipeline.run(sink, err);
                }
                case "dist-autograd" -> {
                    DistAutogradBench da = new DistAutogradBench(DistAutogradBench.Options.parse(suiteArgs));
                    yield () -> da.run(sink, err);
                }
                case "zero" -> {
                    ZeroBench zero = ZeroBench.parse(suiteArgs);
                    yield () -> zero.run(sink, err);
                }
                default -> throw new IllegalArgumentException("unknown bench suite '" + args[0] + "'");
            };
        } catch (IllegalArgumentException e) {
            return usage(err, "bench " + args[0] + ": " + e.getMessage());
        }
        sink.accept(machine(CpuInfo.current()));
        int status = suite.getAsInt();
        if (status != 0) {
            err.println("tensorbus: bench " + args[0] + " failed (status " + status + ")");
            return status;
        }
        return json == null ? 0 : writeJson(json, results, err);
    }

    /**
     * The first record of every benchmark run: the CPU it ran on (the same kernel can win on one CPU kind and lose
     * on another), as {@code machine cpu model="..." vendor=... family=N model_number=N cores=N l2_kib=N
     * capability=AVX512}.
     */
    static Measurement machine(CpuInfo cpu) {
        return new Measurement("machine", "cpu").with("model", cpu.model()).with("vendor", cpu.vendor())
                .with("family", cpu.family()).with("model_number", cpu.modelNumber()).with("cores", cpu.cores())
                .with("l2_kib", cpu.l2Bytes() / 1024).with("l3_kib", cpu.l3Bytes() / 1024)
                .with("capability", cpu.capability());
    }

    private static void noSuiteArgs(String suite, List<String> suiteArgs) {
        if (!suiteArgs.isEmpty()) {
            throw new IllegalArgumentException("unexpected argument '" + suiteArgs.getFirst() + "' (suite " + suite
                    + " takes no options)");
        }
    }

    private static int writeJson(Path file, List<Measurement> results, PrintStream err) {
        try {
            Files.writeString(file, Measurement.jsonArray(results), StandardCharsets.UTF_8);
            return 0;
        } catch (IOException e) {
            err.println("tensorbus: cannot write " + file + ": " + e.getMessage());
            return 1;
        }
    }

    private static int runWorkload(String[] args, PrintStream out, PrintStream err) {
        if (args.length == 0) {
            return usage(err, "run needs a workload");
        }
        List<String> options = List.of(args).subList(1, args.length);
        try {
            return switch (args[0]) {
                case "local-demo" -> {
                    FashionMnistTraining.main(options.toArray(String[]::new));
                    yield 0;
                }
                case DdpFashionMnistCommand.NAME -> DdpFashionMnistCommand.run(options, System.getenv(), out, err);
                case ParameterServerCommand.NAME -> ParameterServerCommand.run(options, System.getenv(), out, err);
                case PipelineResNet50Command.NAME -> PipelineResNet50Command.run(options, out, err);
                default -> usage(err, "unknown workload '" + args[0] + "'");
            };
        } catch (IllegalArgumentException e) {
            return usage(err, "run " + args[0] + ": " + e.getMessage());
        } catch (IOException e) {
            err.println("tensorbus: " + e.getMessage());
            return 1;
        }
    }

    private static int usage(PrintStream err, String problem) {
        err.println("tensorbus: " + problem);
        err.println(USAGE_TEXT);
        return USAGE;
    }
}
