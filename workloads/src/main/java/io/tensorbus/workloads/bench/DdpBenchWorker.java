package io.tensorbus.workloads.bench;

import io.tensorbus.Device;
import io.tensorbus.distributed.Distributed;
import io.tensorbus.distributed.ProcessGroup;
import io.tensorbus.nn.models.MnistNet;
import io.tensorbus.parallel.DistributedDataParallel;
import io.tensorbus.tensor.Generator;
import io.tensorbus.workloads.demo.FashionMnistTraining;
import java.util.List;

/**
 * One rank of {@code tensorbus bench ddp --world N} (N at least 2), started by {@link DdpBench} through the
 * launcher: joins the job through {@code env://} with one compute thread, wraps the tutorial network in
 * {@link DistributedDataParallel}, times the anchor's training steps, and rank 0 prints the
 * {@code ddp step ...} line.
 *
 * <p>Arguments: the suite's options as {@link DdpBench.Options#toArgs()} writes them; the world size comes
 * from the launcher's {@code WORLD_SIZE}.
 */
public final class DdpBenchWorker {
    private DdpBenchWorker() {
    }

    /** Runs the measurement of this rank (environment as set by {@code tensorbus launch}). */
    public static void main(String[] args) {
        DdpBench.Options options = DdpBench.Options.parse(List.of(args));
        int localRank = Integer.parseInt(Distributed.environment().getOrDefault("LOCAL_RANK", "0"));
        Device device = FashionMnistTraining.placed(options.device(), localRank);
        ProcessGroup pg = MultiProcessBench.join(device);
        try {
            // The same seed on every rank, as the anchor's torch.manual_seed(1234); DDP broadcasts rank 0's anyway.
            MnistNet net = new MnistNet(new Generator(1234));
            net.to(device);
            DistributedDataParallel ddp = DistributedDataParallel.builder(net, pg).build();
            Measurement m = DdpBench.measure(ddp, pg.size(), options);
            if (pg.rank() == 0) {
                MultiProcessBench.report(m);
            }
            MultiProcessBench.finish(pg);
        } finally {
            pg.close();
        }
    }
}
