package io.tensorbus.distributed.rpc;

import io.opentelemetry.api.OpenTelemetry;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.StatusCode;
import io.opentelemetry.api.trace.Tracer;
import io.opentelemetry.context.Context;
import io.opentelemetry.context.propagation.TextMapGetter;
import io.opentelemetry.context.propagation.TextMapPropagator;
import java.util.HashMap;
import java.util.Map;

/**
 * OpenTelemetry spans of an agent's calls ({@link RpcOptions#openTelemetry()}), as gRPC's and Vert.x's tracing make
 * them: a client span for each call of a user function, whose context travels in the call (the propagator's
 * fields, W3C's {@code traceparent} by default), and a server span on the callee, child of that context, current
 * while the function runs. Calls of tensorbus's own protocols ({@code tensorbus.*}: RRefs, distributed autograd)
 * are not traced. Thread-safe.
 */
final class RpcTracing {
    /** The most fields a call may carry, and the longest a field may be (W3C's tracestate is at most 512). */
    static final int MAX_FIELDS = 8;
    static final int MAX_FIELD_CHARS = 512;
    private static final String INSTRUMENTATION = "io.tensorbus.distributed.rpc";
    private static final TextMapGetter<Map<String, String>> GETTER = new TextMapGetter<>() {
        @Override
        public Iterable<String> keys(Map<String, String> carrier) {
            return carrier.keySet();
        }

        @Override
        public String get(Map<String, String> carrier, String key) {
            return carrier == null ? null : carrier.get(key);
        }
    };

    private final Tracer tracer;
    private final TextMapPropagator propagator;

    private RpcTracing(OpenTelemetry otel) {
        this.tracer = otel.getTracer(INSTRUMENTATION);
        this.propagator = otel.getPropagators().getTextMapPropagator();
    }

    /** The tracing of {@code options}, or null when it has none. */
    static RpcTracing of(RpcOptions options) {
        return options.openTelemetry() == null ? null : new RpcTracing(options.openTelemetry());
    }

    /** True for the functions that are traced: the user's, not tensorbus's own protocols. */
    static boolean traces(String function) {
        return !function.startsWith(RRefOwnerTable.PREFIX);
    }

    /** Starts the client span of a call of {@code function} on {@code to}, child of the caller's current context. */
    Span startClient(String function, WorkerInfo from, WorkerInfo to) {
        return tracer.spanBuilder(function).setSpanKind(SpanKind.CLIENT).setAttribute("rpc.system", "tensorbus")
                .setAttribute("rpc.method", function).setAttribute("tensorbus.rpc.caller", from.name())
                .setAttribute("tensorbus.rpc.callee", to.name()).startSpan();
    }

    /** The fields that carry {@code span}'s context in a call (none when it is not sampled or not valid). */
    Map<String, String> inject(Span span) {
        Map<String, String> fields = new HashMap<>();
        propagator.inject(Context.current().with(span), fields, Map::put);
        return fields.isEmpty() ? null : fields;
    }

    /** Starts the server span of a call of {@code function} from {@code caller} whose call carried {@code fields}. */
    Span startServer(String function, Map<String, String> fields, WorkerInfo caller, WorkerInfo self) {
        Context parent = fields == null ? Context.root() : propagator.extract(Context.root(), fields, GETTER);
        return tracer.spanBuilder(function).setParent(parent).setSpanKind(SpanKind.SERVER)
                .setAttribute("rpc.system", "tensorbus").setAttribute("rpc.method", function)
                .setAttribute("tensorbus.rpc.caller", caller.name()).setAttribute("tensorbus.rpc.callee", self.name())
                .startSpan();
    }

    /** Ends {@code span}, as an error with its exception when {@code failure} is not null. */
    static void end(Span span, Throwable failure) {
        if (failure != null) {
            span.recordException(failure);
            span.setStatus(StatusCode.ERROR, String.valueOf(failure.getMessage()));
        }
        span.end();
    }

    /**
     * The trace fields of a received call, checked: a map of at most {@link #MAX_FIELDS} string fields of at most
     * {@link #MAX_FIELD_CHARS} characters.
     *
     * @throws IllegalArgumentException for anything else
     */
    static Map<String, String> checkFields(Object fields) {
        if (!(fields instanceof Map<?, ?> m) || m.size() > MAX_FIELDS) {
            throw new IllegalArgumentException("trace fields that are not a map of at most " + MAX_FIELDS
                    + " entries");
        }
        Map<String, String> checked = new HashMap<>();
        for (Map.Entry<?, ?> e : m.entrySet()) {
            if (!(e.getKey() instanceof String k) || !(e.getValue() instanceof String v)
                    || k.length() > MAX_FIELD_CHARS || v.length() > MAX_FIELD_CHARS) {
                throw new IllegalArgumentException("a trace field that is not a string of at most "
                        + MAX_FIELD_CHARS + " characters");
            }
            checked.put(k, v);
        }
        return checked;
    }

    /** {@code task} to run on another thread in the OpenTelemetry context current here (itself in the root one). */
    static Runnable inCurrentContext(Runnable task) {
        Context c = Context.current();
        return c == Context.root() ? task : c.wrap(task);
    }
}
