package io.tensorbus.it.sample;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.tensorbus.DType;
import io.tensorbus.c10d.ReduceOp;
import io.tensorbus.spi.BackendProvider;
import io.tensorbus.spi.DeviceBuffer;
import io.tensorbus.spi.contract.BackendContractTest;
import io.tensorbus.spi.contract.Ranks;
import java.util.ArrayList;
import org.junit.jupiter.api.Test;

/** The sample {@code traced} plugin keeps the backend contract: the suite a third party can run on its own plugin. */
class TracedBackendContractTest extends BackendContractTest {
    @Override
    protected BackendProvider provider() {
        // By name only, as a user would select it.
        return BackendProvider.named("traced");
    }

    @Test
    void theSuiteRunsThroughTheDecorator() throws Exception {
        long before = TracingBackendProvider.count("allReduce");
        try (Ranks ranks = ranks(2)) {
            assertEquals("traced", ranks.get(0).name());
            var bufs = new ArrayList<DeviceBuffer>();
            for (int r = 0; r < 2; r++) {
                int rank = r;
                bufs.add(floats(10, i -> (float) (rank + i)));
            }
            onAll(ranks, r -> ranks.get(r).allReduce(bufs.get(r), ReduceOp.SUM));
            assertEquals(DType.FLOAT32, bufs.get(0).dtype());
            assertEquals(1f + 2 * 9, at(bufs.get(1), 9));
        }
        assertTrue(TracingBackendProvider.count("allReduce") >= before + 2, TracingBackendProvider.counts().toString());
    }
}
