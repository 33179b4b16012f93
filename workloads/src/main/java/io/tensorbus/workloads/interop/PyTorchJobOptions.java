package io.tensorbus.workloads.interop;

import io.tensorbus.distributed.Distributed;
import io.tensorbus.distributed.InitOptions;
import io.tensorbus.distributed.ProcessGroup;
import io.tensorbus.distributed.PyTorchWire;
import io.tensorbus.workloads.cli.Cli;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import picocli.CommandLine.Option;

/**
 * The options of a JVM rank that joins a job started by PyTorch's {@code init_process_group("gloo",
 * init_method=...)}: the same init method, this rank, the world size, the group's timeout, and the PyTorch version of
 * the Python ranks, which picks the wire ({@link PyTorchWire#forVersion}). The JVM rank uses the {@code gloo} backend
 * in PyTorch interop mode ({@link InitOptions#pytorchInterop()}).
 */
public final class PyTorchJobOptions {
    @Option(names = "--init-method", paramLabel = "URL", description = "the job's init method, as the Python ranks"
            + " pass it (default: tcp://127.0.0.1:29500)")
    private String initMethod = "tcp://127.0.0.1:29500";
    @Option(names = "--pytorch-version", paramLabel = "V", description = "torch.__version__ of the Python ranks:"
            + " 1.13 speaks one wire, 2.2 and later another (default: 1.13, Debian's python3-torch)")
    private String pytorchVersion = "1.13";
    @Option(names = "--rank", paramLabel = "R", required = true, description = "this rank in the job")
    private int rank;
    @Option(names = "--world-size", paramLabel = "W", required = true, description = "the job's number of ranks,"
            + " Python and JVM together")
    private int worldSize;
    @Option(names = "--timeout-seconds", paramLabel = "S", description = "the group's timeout (default: 300)")
    private long timeoutSeconds = 300;

    /**
     * Joins the job and returns this rank's default group; waits at most the timeout.
     *
     * @throws IllegalArgumentException for a rank outside the world, a timeout below 1 s, or a PyTorch version that is
     *     not served
     */
    public ProcessGroup join() throws Exception {
        int world = Cli.range("--world-size", worldSize, 2, 4096);
        int r = Cli.range("--rank", rank, 0, world - 1);
        long seconds = Cli.range("--timeout-seconds", timeoutSeconds, 1, 86_400);
        InitOptions options = InitOptions.builder().backend("gloo")
                .pytorchInterop(PyTorchWire.forVersion(pytorchVersion)).initMethod(initMethod)
                .rank(r).worldSize(world).timeout(Duration.ofSeconds(seconds)).build();
        return Distributed.initProcessGroup(options).await(seconds, TimeUnit.SECONDS);
    }
}
