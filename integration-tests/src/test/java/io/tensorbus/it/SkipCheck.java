package io.tensorbus.it;

import io.tensorbus.distributed.Distributed;
import io.tensorbus.distributed.FlightRecorder;
import io.tensorbus.distributed.InitOptions;
import io.tensorbus.distributed.ProcessGroup;
import io.tensorbus.tensor.Tensor;
import java.time.Duration;

/**
 * One rank of {@link FlightRecorderTraceTest}: sets the flight recorder's dump directory to {@code args[0]}, joins
 * the group ({@code env://}, 5 s timeout), runs one all-reduce, then every rank but the last runs a second
 * all-reduce while the last rank skips it and goes to a barrier. Each rank's operation fails, its recorder writes
 * its dump, and the exception escapes main.
 */
public final class SkipCheck {
    private SkipCheck() {
    }

    public static void main(String[] args) throws Exception {
        System.setProperty(FlightRecorder.DIR_PROPERTY, args[0]);
        ProcessGroup pg = Distributed.initProcessGroup(InitOptions.builder().timeout(Duration.ofSeconds(5)).build())
                .await();
        Tensor t = Tensor.ones(8);
        pg.allReduce(t).await();
        if (pg.rank() == pg.size() - 1) {
            pg.barrier().await();
        } else {
            pg.allReduce(t).await();
        }
        System.out.println("rank " + pg.rank() + " was not stopped");
    }
}
