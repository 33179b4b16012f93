package io.tensorbus.it;

import io.tensorbus.distributed.Distributed;
import io.tensorbus.distributed.InitOptions;
import io.tensorbus.distributed.ProcessGroup;
import io.tensorbus.tensor.Tensor;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;

/**
 * One rank of {@link MetricsScrapeTest}: five all-reduces of 1 KiB, {@code SCRAPE-ME rank R}, then it waits (at
 * most 60 s) for the file its first argument names, so that the test scrapes a running job, and ends after a
 * barrier. Reads its rank through {@link Distributed#environment()}, so it runs as a process or as a rank thread.
 */
public final class MetricsCheck {
    private MetricsCheck() {
    }

    public static void main(String[] args) throws Exception {
        Path release = Path.of(args[0]);
        ProcessGroup pg = Distributed.initProcessGroup(InitOptions.builder().timeout(Duration.ofSeconds(90))
                .build()).await();
        try {
            Tensor t = Tensor.zeros(256);
            for (int i = 0; i < 5; i++) {
                pg.allReduce(t).await();
            }
            System.out.println("SCRAPE-ME rank " + pg.rank());
            System.out.flush();
            long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
            while (!Files.exists(release) && System.nanoTime() < deadline) {
                Thread.sleep(20);
            }
            pg.barrier().await();
        } finally {
            pg.destroy().await();
        }
    }
}
