package io.tensorbus.it.hosts;

import io.tensorbus.DType;
import io.tensorbus.distributed.Distributed;
import io.tensorbus.distributed.InitOptions;
import io.tensorbus.distributed.ProcessGroup;
import io.tensorbus.tensor.Tensor;
import java.time.Duration;

/**
 * One rank of a job that all-reduces {@code args[1]} MiB over and over with a group timeout of {@code args[0]}
 * seconds, checking every element of every result, for {@code args[2]} iterations (0: until it fails). Prints
 * {@code ITER i OK} after each, {@code WRONG} and exits 2 on a wrong element, and on a failure
 * {@code FAILED <epoch millis> <message>} and exits 1.
 */
public final class PartitionCheck {
    private PartitionCheck() {
    }

    public static void main(String[] args) {
        Duration timeout = Duration.ofSeconds(Integer.parseInt(args[0]));
        int elements = Integer.parseInt(args[1]) << 18;
        int iterations = Integer.parseInt(args[2]);
        ProcessGroup pg = Distributed.initProcessGroup(InitOptions.builder().timeout(timeout).build()).await();
        int world = pg.size();
        Tensor t = Tensor.full(0, DType.FLOAT32, elements);
        try {
            for (int i = 0; iterations == 0 || i < iterations; i++) {
                t.filli(pg.rank() + 1 + i);
                pg.allReduce(t).await();
                double expected = world * (world + 1) / 2.0 + (double) world * i;
                double worst = t.sub(expected).abs().max().item();
                if (worst != 0) {
                    System.out.println("WRONG at iteration " + i + ": off by up to " + worst);
                    System.exit(2);
                }
                System.out.println("ITER " + i + " OK");
            }
            pg.destroy().await();
            System.out.println("DONE");
        } catch (RuntimeException e) {
            System.out.println("FAILED " + System.currentTimeMillis() + " " + e.getMessage());
            System.out.flush();
            System.exit(1);
        }
    }
}
