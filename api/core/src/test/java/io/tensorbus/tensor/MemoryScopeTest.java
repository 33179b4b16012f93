package io.tensorbus.tensor;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.tensorbus.DType;
import io.tensorbus.internal.tensor.TensorInternals;
import io.tensorbus.nn.BatchNorm2d;
import io.tensorbus.nn.Functional;
import io.tensorbus.nn.Module;
import io.tensorbus.nn.models.MnistNet;
import io.tensorbus.optim.Adam;
import io.tensorbus.optim.Optimizer;
import io.tensorbus.optim.SGD;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Deterministic release: scopes give storage back at close, keep what is kept, and never touch live state. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class MemoryScopeTest {

    private static boolean released(Tensor t) {
        return TensorInternals.storage(t).isReleased();
    }

    @Test
    void closingGivesEveryTensorMadeInsideBackAndLaterUseFails() {
        Tensor outside = Tensor.ones(64);
        Tensor inside;
        Tensor view;
        long frees = HostMemory.stats().frees();
        try (MemoryScope scope = MemoryScope.open()) {
            inside = outside.mul(2);
            view = inside.view(8, 8);
            assertEquals(128, inside.sum().item());
        }
        assertTrue(released(inside));
        assertTrue(HostMemory.stats().frees() >= frees + 2, "the product and its sum went back");
        assertFalse(released(outside));
        assertEquals(64, outside.sum().item());
        IllegalStateException e = assertThrows(IllegalStateException.class, view::sum);
        assertTrue(e.getMessage().contains("released"), e.getMessage());
    }

    @Test
    void keptTensorsMoveToTheEnclosingScope() {
        Tensor kept;
        Tensor dropped;
        try (MemoryScope outer = MemoryScope.open()) {
            try (MemoryScope inner = MemoryScope.open()) {
                kept = Tensor.ones(4).add(1);
                dropped = Tensor.ones(4).add(2);
                inner.keep(kept);
            }
            assertTrue(released(dropped));
            assertFalse(released(kept));
            assertEquals(8, kept.sum().item());
        }
        assertTrue(released(kept), "the outer scope owned it after the inner one kept it");
    }

    @Test
    void detachedTensorsOutliveEveryScope() {
        Tensor state;
        try (MemoryScope outer = MemoryScope.open(); MemoryScope inner = MemoryScope.open()) {
            state = Tensor.zeros(3).add(5);
            MemoryScope.detach(state);
        }
        assertFalse(released(state));
        assertEquals(15, state.sum().item());
    }

    @Test
    void scopesCloseOnTheirThreadInnermostFirst() throws Exception {
        MemoryScope outer = MemoryScope.open();
        MemoryScope inner = MemoryScope.open();
        IllegalStateException order = assertThrows(IllegalStateException.class, outer::close);
        assertTrue(order.getMessage().contains("innermost first"), order.getMessage());
        Throwable elsewhere = CompletableFuture.supplyAsync(() -> {
            try {
                inner.close();
                return null;
            } catch (IllegalStateException e) {
                return e;
            }
        }).get(10, TimeUnit.SECONDS);
        assertTrue(elsewhere != null && elsewhere.getMessage().contains("thread that opened"),
                String.valueOf(elsewhere));
        inner.close();
        outer.close();
        outer.close(); // a second close does nothing
        Tensor after = Tensor.ones(2).mul(3);
        assertFalse(released(after), "no scope is open any more");
    }

    @Test
    void gradientsParametersAndOptimizerStateSurviveATrainingStepInAScope() {
        Function<Boolean, List<Tensor>> train = scoped -> {
            MnistNet model = new MnistNet(new Generator(7));
            model.eval(); // no dropout: both runs see the same arithmetic
            Optimizer sgd = SGD.builder().lr(0.05).momentum(0.9).build(model.parameters());
            Tensor x = Tensor.rand(new Generator(1), DType.FLOAT32, 4, 1, 28, 28);
            Tensor y = Tensor.of(new long[] {1, 0, 7, 3});
            for (int i = 0; i < 3; i++) {
                MemoryScope scope = scoped ? MemoryScope.open() : null;
                sgd.zeroGrad(true);
                Functional.nllLoss(model.forward(x), y).backward();
                sgd.step();
                if (scope != null) {
                    scope.close();
                }
            }
            model.parameters().forEach(p -> assertFalse(released(p.grad()), "a gradient survives its step"));
            sgd.state(model.parameters().get(0)).values().forEach(s -> assertFalse(released(s)));
            return model.parameters();
        };
        List<Tensor> plain = train.apply(false);
        List<Tensor> scoped = train.apply(true);
        for (int i = 0; i < plain.size(); i++) {
            assertArrayEquals(plain.get(i).toFloatArray(), scoped.get(i).toFloatArray(), "parameter " + i);
        }
    }

    @Test
    void aModuleBuiltInsideAScopeKeepsItsParametersAndBuffers() {
        Module model;
        try (MemoryScope scope = MemoryScope.open()) {
            model = new BatchNorm2d(3);
        }
        model.parameters().forEach(p -> assertFalse(released(p)));
        model.buffers().forEach(b -> assertFalse(released(b)));
    }

    @Test
    void anOptimizerStepGivesItsTemporariesBackAtOnce() {
        Tensor w = Tensor.ones(1 << 16).requiresGrad(true);
        Optimizer adam = Adam.builder().lr(0.01).weightDecay(0.1).amsgrad(true).build(List.of(w));
        w.setGrad(Tensor.full(0.5, DType.FLOAT32, 1 << 16));
        adam.step(); // creates the state
        long live = HostMemory.stats().allocatedBytes();
        long frees = HostMemory.stats().frees();
        for (int i = 0; i < 3; i++) {
            adam.step();
        }
        // Weight decay, grad * grad, the denominators: back in the cache as each step ends, not when the collector
        // runs (which could only free more).
        assertTrue(HostMemory.stats().allocatedBytes() <= live, "no temporary outlives its step");
        assertTrue(HostMemory.stats().frees() - frees >= 3 * 3, "at least three temporaries per step went back");
    }
}
