package io.tensorbus.distributed.rpc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.StatusCode;
import io.opentelemetry.api.trace.propagation.W3CTraceContextPropagator;
import io.opentelemetry.context.Scope;
import io.opentelemetry.context.propagation.ContextPropagators;
import io.opentelemetry.sdk.OpenTelemetrySdk;
import io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.opentelemetry.sdk.trace.export.SimpleSpanProcessor;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** RPC calls carry the caller's trace context, and the callee's span is the child of the caller's. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class RpcTracingTest {
    private final InMemorySpanExporter exporter = InMemorySpanExporter.create();
    private final OpenTelemetrySdk otel = OpenTelemetrySdk.builder()
            .setTracerProvider(SdkTracerProvider.builder().addSpanProcessor(SimpleSpanProcessor.create(exporter))
                    .build())
            .setPropagators(ContextPropagators.create(W3CTraceContextPropagator.getInstance())).build();
    private final RpcRegistry functions = new RpcRegistry()
            .register("spanSeen", args -> Span.current().getSpanContext().getSpanId())
            .register("fails", args -> {
                throw new IllegalStateException("refused on purpose");
            });

    @AfterEach
    void shutDown() {
        otel.close();
    }

    private SpanData span(String name, SpanKind kind) throws InterruptedException {
        RpcWorkers.eventually(() -> exporter.getFinishedSpanItems().stream().anyMatch(s -> s.getName().equals(name)
                && s.getKind() == kind), "a " + kind + " span " + name);
        return exporter.getFinishedSpanItems().stream().filter(s -> s.getName().equals(name) && s.getKind() == kind)
                .findFirst().orElseThrow();
    }

    @Test
    void theCalleesSpanIsTheChildOfTheCallersAndCurrentWhileTheFunctionRuns() throws Exception {
        try (RpcWorkers w = new RpcWorkers().start(2, r -> RpcOptions.builder().registry(functions)
                .openTelemetry(otel))) {
            Span request = otel.getTracer("test").spanBuilder("request").startSpan();
            String seen;
            try (Scope ignored = request.makeCurrent()) {
                seen = w.get(0).rpcSync("worker1", "spanSeen");
            }
            request.end();
            SpanData client = span("spanSeen", SpanKind.CLIENT);
            SpanData server = span("spanSeen", SpanKind.SERVER);
            assertEquals(request.getSpanContext().getSpanId(), client.getParentSpanId());
            assertEquals(client.getSpanId(), server.getParentSpanId(), "the callee's span is the caller's child");
            assertEquals(request.getSpanContext().getTraceId(), server.getTraceId());
            assertEquals(server.getSpanId(), seen, "the function ran with the server span current");
            assertEquals("worker0", server.getAttributes().asMap().entrySet().stream()
                    .filter(e -> e.getKey().getKey().equals("tensorbus.rpc.caller")).findFirst().orElseThrow()
                    .getValue());
        }
    }

    @Test
    void aFailedCallEndsBothSpansAsErrors() throws Exception {
        try (RpcWorkers w = new RpcWorkers().start(2, r -> RpcOptions.builder().registry(functions)
                .openTelemetry(otel))) {
            assertThrows(RemoteException.class, () -> w.get(0).rpcSync("worker1", "fails"));
            assertEquals(StatusCode.ERROR, span("fails", SpanKind.CLIENT).getStatus().getStatusCode());
            SpanData server = span("fails", SpanKind.SERVER);
            assertEquals(StatusCode.ERROR, server.getStatus().getStatusCode());
            assertTrue(server.getEvents().stream().anyMatch(e -> e.getName().equals("exception")));
        }
    }

    @Test
    void agentsWithoutTracingSendNoContextAndMakeNoSpans() throws Exception {
        try (RpcWorkers w = new RpcWorkers().start(2, r -> RpcOptions.builder().registry(functions))) {
            Span request = otel.getTracer("test").spanBuilder("request").startSpan();
            String seen;
            try (Scope ignored = request.makeCurrent()) {
                seen = w.get(0).rpcSync("worker1", "spanSeen");
            }
            request.end();
            assertEquals(Span.getInvalid().getSpanContext().getSpanId(), seen, "no context reached the callee");
            assertEquals(List.of("request"), exporter.getFinishedSpanItems().stream().map(SpanData::getName).toList());
        }
    }

    @Test
    void malformedTraceFieldsAreRefused() {
        assertThrows(IllegalArgumentException.class, () -> RpcTracing.checkFields("traceparent"));
        assertThrows(IllegalArgumentException.class, () -> RpcTracing.checkFields(Map.of("traceparent", 5L)));
        assertThrows(IllegalArgumentException.class, () -> RpcTracing.checkFields(Map.of("k", "v".repeat(513))));
        assertEquals(Map.of("traceparent", "00-x"), RpcTracing.checkFields(Map.of("traceparent", "00-x")));
    }
}
