package io.tensorbus.workloads.cli;

import io.tensorbus.distributed.Distributed;
import io.tensorbus.distributed.InitOptions;
import io.tensorbus.distributed.ProcessGroup;
import io.tensorbus.distributed.Timeline;
import io.tensorbus.tensor.Tensor;
import java.util.HashMap;
import java.util.Map;

/**
 * A rank for the timeline test, with {@code TENSORBUS_TIMELINE} set to its first argument: two all-reduces, the last
 * rank sleeping 300 ms before the second, then a barrier; it destroys its group, which closes its timeline.
 */
public final class StragglerMain {
    private StragglerMain() {
    }

    public static void main(String[] args) throws Exception {
        // The launcher's children inherit the test JVM's environment: the directory comes as an argument.
        Map<String, String> env = new HashMap<>(Distributed.environment());
        env.put(Timeline.ENV, args[0]);
        ProcessGroup pg = Distributed.initProcessGroup(InitOptions.builder().environment(env).build()).await();
        Tensor t = Tensor.zeros(16);
        pg.allReduce(t).await();
        if (pg.rank() == pg.size() - 1) {
            Thread.sleep(300);
        }
        pg.allReduce(t).await();
        pg.barrier().await();
        pg.close();
    }
}
