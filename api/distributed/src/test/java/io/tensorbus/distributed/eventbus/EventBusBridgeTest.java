package io.tensorbus.distributed.eventbus;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.tensorbus.c10d.JobSecret;
import io.tensorbus.distributed.rpc.RpcOptions;
import io.tensorbus.distributed.rpc.RpcRegistry;
import io.tensorbus.distributed.rpc.RpcWorkers;
import io.tensorbus.tensor.Tensor;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.eventbus.DeliveryOptions;
import io.vertx.core.eventbus.EventBus;
import io.vertx.core.eventbus.ReplyException;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The bridge serves proven calls and refuses the rest before reading them; the codec carries tensors. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class EventBusBridgeTest {
    private final JobSecret secret = JobSecret.random();
    private final RpcRegistry functions = new RpcRegistry().register("twice", a -> ((Tensor) a.get(0)).mul(2));

    private static ReplyException refusal(Throwable t) {
        Throwable c = t instanceof CompletionException ? t.getCause() : t;
        return (ReplyException) c;
    }

    @Test
    void aProvenCallRunsTheWorkersFunctionAndAnUnprovenOneIsRefusedUnread() throws Exception {
        try (RpcWorkers w = new RpcWorkers().start(1, r -> RpcOptions.builder().registry(functions))) {
            EventBus bus = w.vertx().eventBus();
            EventBusBridge bridge = EventBusBridge.serve(w.get(0), bus, secret, "twice");
            Tensor twice = EventBusBridge.<Tensor>call(bus, secret, "worker0", "twice", Tensor.of(new float[] {1, 2},
                    2)).await(10, TimeUnit.SECONDS);
            assertArrayEquals(new float[] {2, 4}, twice.toFloatArray());
            // Garbage without a proof: refused (401), not a decoding failure (500), so nothing was decoded.
            String address = EventBusBridge.address("worker0", "twice");
            ReplyException e = refusal(assertThrows(Exception.class, () -> bus.request(address,
                    Buffer.buffer(new byte[] {9, 9, 9})).await(10, TimeUnit.SECONDS)));
            assertEquals(EventBusBridge.REFUSED, e.failureCode());
            // Another job's secret, and a proof for other bytes than those sent.
            e = refusal(assertThrows(Exception.class, () -> EventBusBridge.call(bus, JobSecret.random(), "worker0",
                    "twice", Tensor.ones(2)).await(10, TimeUnit.SECONDS)));
            assertEquals(EventBusBridge.REFUSED, e.failureCode());
            String time = Long.toString(System.currentTimeMillis());
            e = refusal(assertThrows(Exception.class, () -> bus.request(address, Buffer.buffer(new byte[] {1}),
                    new DeliveryOptions().addHeader(EventBusBridge.TIME_HEADER, time)
                            .addHeader(EventBusBridge.PROOF_HEADER, "00".repeat(32))).await(10, TimeUnit.SECONDS)));
            assertEquals(EventBusBridge.REFUSED, e.failureCode());
            assertEquals(3, bridge.refused());
            bridge.closeAsync().await(10, TimeUnit.SECONDS);
        }
    }

    @Test
    void servingNeedsASecretAndRegisteredFunctions() throws Exception {
        try (RpcWorkers w = new RpcWorkers().start(1, r -> RpcOptions.builder().registry(functions))) {
            EventBus bus = w.vertx().eventBus();
            assertThrows(IllegalArgumentException.class, () -> EventBusBridge.serve(w.get(0), bus, JobSecret.none(),
                    "twice"));
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () ->
                    EventBusBridge.serve(w.get(0), bus, secret, "unknown"));
            assertTrue(e.getMessage().contains("'unknown' is not registered on worker worker0"), e.getMessage());
            assertThrows(IllegalArgumentException.class, () -> EventBusBridge.serve(w.get(0), bus, secret));
        }
    }

    @Test
    void theCodecHandsLocalReceiversTheTensorItselfAndCarriesItOnTheWire() throws Exception {
        try (RpcWorkers w = new RpcWorkers().start(1, r -> RpcOptions.builder().registry(functions))) {
            TensorMessageCodec.register(w.vertx());
            Tensor sent = Tensor.of(new float[] {1, 2, 3}, 3);
            w.vertx().eventBus().<Tensor>consumer("it.tensor", m -> m.reply(m.body()));
            Tensor back = w.vertx().eventBus().<Tensor>request("it.tensor", sent).await(10, TimeUnit.SECONDS).body();
            assertSame(sent, back, "no copy inside one JVM");
        }
        TensorMessageCodec codec = new TensorMessageCodec();
        Buffer frame = Buffer.buffer("prefix");
        codec.encodeToWire(frame, Tensor.of(new float[] {1, 2, 3, 4}, 2, 2).requiresGrad(true));
        Tensor read = codec.decodeFromWire(6, frame);
        assertArrayEquals(new int[] {2, 2}, read.shape());
        assertArrayEquals(new float[] {1, 2, 3, 4}, read.toFloatArray());
        assertTrue(read.requiresGrad());
        assertThrows(IllegalArgumentException.class, () -> codec.decodeFromWire(6, frame.getBuffer(0,
                frame.length() - 1)));
        assertThrows(IllegalArgumentException.class, () -> codec.decodeFromWire(0, Buffer.buffer(new byte[] {0, 0,
                0, 3, 1, 2, 3})));
    }
}
