package io.tensorbus.workloads.cli;

import io.tensorbus.workloads.bench.CollectivesBench;
import io.tensorbus.workloads.bench.DdpBench;
import io.tensorbus.workloads.bench.DistAutogradBench;
import io.tensorbus.workloads.bench.GlooMixedBench;
import io.tensorbus.workloads.bench.NnBench;
import io.tensorbus.workloads.bench.P2pBench;
import io.tensorbus.workloads.bench.PipelineBench;
import io.tensorbus.workloads.bench.RpcBench;
import io.tensorbus.workloads.bench.SoakBench;
import io.tensorbus.workloads.bench.TensorBench;
import io.tensorbus.workloads.bench.ZeroBench;
import picocli.CommandLine.Command;

/**
 * {@code tensorbus bench SUITE [options] [--json FILE]}: runs a benchmark suite, one line per measurement
 * ({@code SUITE NAME key=value ...}), the first naming the CPU. The suites of several processes start one JVM per
 * rank.
 */
@Command(name = "bench", synopsisSubcommandLabel = "SUITE",
        description = "run a benchmark suite; one line per measurement, also written as JSON with --json FILE",
        subcommands = {TensorBench.Suite.class, NnBench.Suite.class, P2pBench.Suite.class,
            CollectivesBench.Suite.class, DdpBench.Suite.class, RpcBench.Suite.class, DistAutogradBench.Suite.class,
            PipelineBench.Suite.class, ZeroBench.Suite.class, SoakBench.Suite.class, GlooMixedBench.Suite.class})
public final class BenchCommand extends CommandGroup {
    @Override
    String member() {
        return "a suite";
    }
}
