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
import io.tensorbus.workloads.bench.SoakBench;
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
 * {@code --help} (or {@code -h}) after any command or workload prints its usage ({@link Usage}) and exits 0; bad
 * usage prints the reason and where the usage is, and exits with status 2.
 */
public final class Main {
    /** Exit status for bad usage, as most Unix tools. */
    static final int USAGE = 2;

    private Main() {
    }

    /** {@code fr-trace DIR}: prints {@link FlightRecorderTrace}'s report; 0 when the ranks agree, 1 when not. */
    private static int frTrace(String[] args, PrintStream out, PrintStream err) {
        if (args.length != 1) {
            return Usage.error(err, "fr-trace needs one directory of flight-recorder dumps", "fr-trace");
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
            return Usage.error(err, "no command given", null);
        }
        String[] rest = Arrays.copyOfRange(args, 1, args.length);
        if (!args[0].equals("launch") && Usage.of(args[0]) != null && Usage.asksForHelp(List.of(rest))) {
            return help(args[0], rest, out);
        }
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
                out.println(Usage.all());
                yield 0;
            }
            default -> Usage.error(err, "unknown command '" + args[0] + "'", null);
        };
    }

    /** {@code COMMAND ... --help}: that command's usage, or the workload's for {@code run WORKLOAD --help}. */
    private static int help(String command, String[] rest, PrintStream out) {
        String workload = command.equals("run") && rest.length > 0 ? Usage.ofWorkload(rest[0]) : null;
        out.println(workload != null ? workload : Usage.of(command));
        return 0;
    }

    private static int bench(String[] args, PrintStream out, PrintStream err) {
        if (args.length == 0) {
            return Usage.error(err, "bench needs a suite", "bench");
        }
        Path json = null;
        List<String> suiteArgs = new ArrayList<>();
        for (int i = 1; i < args.length; i++) {
            if (args[i].equals("--json")) {
                if (i + 1 >= args.length) {
                    return Usage.error(err, "bench: --json needs a file", "bench");
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
                case "soak" -> {
                    SoakBench soak = new SoakBench(SoakBench.Options.parse(suiteArgs));
                    yield () -> soak.run(sink, err);
                }
                case "zero" -> {
                    ZeroBench zero = ZeroBench.parse(suiteArgs);
                    yield () -> zero.run(sink, err);
                }
                default -> throw new IllegalArgumentException("unknown bench suite '" + args[0] + "'");
            };
        } catch (IllegalArgumentException e) {
            return Usage.error(err, "bench " + args[0] + ": " + e.getMessage(), "bench");
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
            return Usage.error(err, "run needs a workload", "run");
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
                default -> Usage.error(err, "unknown workload '" + args[0] + "'", "run");
            };
        } catch (IllegalArgumentException e) {
            return Usage.error(err, "run " + args[0] + ": " + e.getMessage(), "run " + args[0]);
        } catch (IOException e) {
            err.println("tensorbus: " + e.getMessage());
            return 1;
        }
    }

}
