package io.tensorbus.internal.autograd;

import io.tensorbus.autograd.Autograd;
import io.tensorbus.internal.tensor.TensorInternals;
import io.tensorbus.tensor.Tensor;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

class EngineCallbackTest {

    @Test
    void callbacksRunAfterEveryNodeInOrderAndMayQueueMore() {
        List<String> events = new ArrayList<>();
        Tensor w = Tensor.ones(3).requiresGrad(true);
        TensorInternals.gradAccumulator(w).registerPostHook((in, out) -> {
            events.add("accumulated");
            Engine.queueCallback(() -> {
                events.add("first");
                Engine.queueCallback(() -> events.add("queued by first"));
            });
            Engine.queueCallback(() -> events.add("second"));
        });
        w.mul(2).sum().backward();
        assertEquals(List.of("accumulated", "first", "second", "queued by first"), events);
    }

    @Test
    void aCallbackQueuedInsideANestedPassRunsWhenTheOutermostPassEnds() {
        List<String> events = new ArrayList<>();
        Tensor inner = Tensor.ones(2).requiresGrad(true);
        TensorInternals.gradAccumulator(inner)
                .registerPostHook((in, out) -> Engine.queueCallback(() -> events.add("callback")));
        Tensor outer = Tensor.ones(2).requiresGrad(true);
        TensorInternals.gradAccumulator(outer).registerPostHook((in, out) -> events.add("outer leaf"));
        Tensor h = outer.mul(3);
        Tensor out;
        try (var ignored = Autograd.noGrad()) {
            out = h.mul(1);
        }
        Tensor y = Autograd.record("Reentrant", out, grads -> {
            try (var ignored = Autograd.enableGrad()) {
                inner.mul(2).sum().backward();
            }
            events.add("nested pass returned");
            return new Tensor[] {grads[0]};
        }, h);
        y.sum().backward();
        assertEquals(List.of("nested pass returned", "outer leaf", "callback"), events);
    }

    @Test
    void queueingOutsideABackwardPassIsRefusedAndAThrowingCallbackEndsThePass() {
        assertThrows(IllegalStateException.class, () -> Engine.queueCallback(() -> { }));
        Tensor w = Tensor.ones(1).requiresGrad(true);
        TensorInternals.gradAccumulator(w).registerPostHook((in, out) -> Engine.queueCallback(() -> {
            throw new IllegalArgumentException("from the callback");
        }));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> w.sum().backward());
        assertEquals("from the callback", e.getMessage());
        assertThrows(IllegalStateException.class, () -> Engine.queueCallback(() -> { }),
                "the failed pass left no callback list behind");
    }
}
