package io.tensorbus.autograd;

import io.tensorbus.internal.autograd.Engine;
import io.tensorbus.internal.tensor.TensorInternals;
import io.tensorbus.tensor.Tensor;
import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class AutogradTest {
    private static Tensor leaf(double... v) {
        return Tensor.of(v).requiresGrad(true);
    }

    @Test
    void backwardAccumulatesIntoLeafGradAcrossCalls() {
        Tensor x = leaf(1, 2, 3);
        x.mul(x).sum().backward();
        assertArrayEquals(new double[] {2, 4, 6}, x.grad().toDoubleArray());
        x.mul(3.0).sum().backward();
        assertArrayEquals(new double[] {5, 7, 9}, x.grad().toDoubleArray());
    }

    @Test
    void diamondGraphRunsEachNodeOnceWithSummedGradients() {
        Tensor x = leaf(2);
        Tensor a = x.mul(3.0);
        List<String> ran = new ArrayList<>();
        a.gradFn().registerPostHook((in, out) -> ran.add("a"));
        Tensor y = a.mul(a).add(a.exp());
        y.backward();
        // dy/dx = (2a + e^a) * 3 with a = 6
        assertEquals((12 + Math.exp(6)) * 3, x.grad().item(), 1e-9);
        assertEquals(List.of("a"), ran);
    }

    @Test
    void backwardTwiceWithoutRetainGraphFailsWithClearMessage() {
        Tensor x = leaf(1, 2);
        Tensor y = x.mul(x).sum();
        y.backward();
        IllegalStateException e = assertThrows(IllegalStateException.class, y::backward);
        assertTrue(e.getMessage().contains("backward through the graph a second time"), e.getMessage());
        assertTrue(e.getMessage().contains("retainGraph"), e.getMessage());
    }

    @Test
    void retainGraphAllowsASecondBackward() {
        Tensor x = leaf(1, 2);
        Tensor y = x.mul(x).sum();
        y.backward(null, true);
        y.backward();
        assertArrayEquals(new double[] {4, 8}, x.grad().toDoubleArray());
    }

    @Test
    void inPlaceChangeOfASavedTensorFailsAtBackward() {
        Tensor x = leaf(1, 2);
        Tensor e = x.exp();
        Tensor y = e.sum();
        e.muli(2.0);
        IllegalStateException ex = assertThrows(IllegalStateException.class, y::backward);
        assertTrue(ex.getMessage().contains("modified by an inplace operation"), ex.getMessage());
        assertTrue(ex.getMessage().contains("is at version 1; expected version 0"), ex.getMessage());
    }

    @Test
    void inPlaceOnALeafThatRequiresGradIsRefused() {
        Tensor x = leaf(1, 2);
        IllegalStateException e = assertThrows(IllegalStateException.class, () -> x.addi(1.0));
        assertTrue(e.getMessage().contains("leaf tensor that requires grad"), e.getMessage());
        try (var ignored = Autograd.noGrad()) {
            x.addi(1.0);
        }
        assertArrayEquals(new double[] {2, 3}, x.toDoubleArray());
    }

    @Test
    void noGradScopeRecordsNothingAndRestoresTheMode() {
        Tensor x = leaf(1);
        try (var ignored = Autograd.noGrad()) {
            assertFalse(Autograd.isGradEnabled());
            Tensor y = x.mul(2.0);
            assertNull(y.gradFn());
            assertFalse(y.requiresGrad());
            try (var inner = Autograd.enableGrad()) {
                assertTrue(x.mul(2.0).requiresGrad());
            }
            assertFalse(Autograd.isGradEnabled());
        }
        assertTrue(Autograd.isGradEnabled());
    }

    @Test
    void detachCutsTheGraphButSharesStorage() {
        Tensor x = leaf(1, 2);
        Tensor y = x.mul(2.0);
        Tensor d = y.detach();
        assertNull(d.gradFn());
        assertSame(TensorInternals.storage(y), TensorInternals.storage(d));
        Tensor z = d.mul(x).sum();
        z.backward();
        assertArrayEquals(new double[] {2, 4}, x.grad().toDoubleArray());
    }

    @Test
    void gradReturnsGradientsWithoutTouchingDotGrad() {
        Tensor x = leaf(1, 2);
        Tensor w = leaf(3, 4);
        Tensor y = x.mul(w).sum();
        List<Tensor> g = Autograd.grad(List.of(y), List.of(x, w), null, false, false);
        assertArrayEquals(new double[] {3, 4}, g.get(0).toDoubleArray());
        assertArrayEquals(new double[] {1, 2}, g.get(1).toDoubleArray());
        assertNull(x.grad());
        assertNull(w.grad());
    }

    @Test
    void gradOfAnUnusedInputIsAnErrorUnlessAllowed() {
        Tensor x = leaf(1);
        Tensor unused = leaf(5);
        Tensor y = x.mul(2.0);
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> Autograd.grad(List.of(y), List.of(unused), null, true, false));
        assertTrue(e.getMessage().contains("not used"), e.getMessage());
        assertNull(Autograd.grad(List.of(y), List.of(unused), null, false, true).get(0));
    }

    @Test
    void gradWithRespectToAnIntermediateTensor() {
        Tensor x = leaf(2);
        Tensor h = x.mul(x);
        Tensor y = h.mul(3.0);
        assertEquals(3.0, Autograd.grad(List.of(y), List.of(h), null, false, false).get(0).item(), 0);
    }

    @Test
    void tensorHooksSeeAndReplaceGradients() {
        Tensor x = leaf(1, 2);
        Tensor h = x.mul(2.0);
        List<double[]> seen = new ArrayList<>();
        h.registerHook(g -> {
            seen.add(g.toDoubleArray());
            return g.mul(10.0);
        });
        RemovableHandle leafHook = x.registerHook(g -> g.add(1.0));
        h.sum().backward();
        assertArrayEquals(new double[] {1, 1}, seen.get(0));
        assertArrayEquals(new double[] {21, 21}, x.grad().toDoubleArray());
        leafHook.remove();
        x.setGrad(null);
        x.mul(2.0).sum().backward();
        assertArrayEquals(new double[] {2, 2}, x.grad().toDoubleArray());
    }

    @Test
    void accumulatorPostHookRunsAfterTheLeafGradIsWritten() {
        Tensor p = leaf(1, 2, 3);
        List<double[]> atHook = new ArrayList<>();
        TensorInternals.gradAccumulator(p).registerPostHook((in, out) -> atHook.add(p.grad().toDoubleArray()));
        p.mul(p).sum().backward();
        assertEquals(1, atHook.size());
        assertArrayEquals(new double[] {2, 4, 6}, atHook.get(0));
    }

    @Test
    void engineAccumulatesIntoACallerMapInsteadOfDotGrad() {
        Tensor x = leaf(1, 2);
        Tensor w = leaf(3);
        Tensor y = x.mul(w).sum();
        Map<Tensor, Tensor> grads = new IdentityHashMap<>();
        Engine.execute(List.of(Autograd.gradientEdge(y)), List.of(Tensor.scalar(1.0, y.dtype())),
                new Engine.Options(false, (leaf, g) -> grads.merge(leaf, g, Tensor::add), List.of()));
        assertNull(x.grad());
        assertArrayEquals(new double[] {3, 3}, grads.get(x).toDoubleArray());
        assertEquals(3.0, grads.get(w).item(), 0);
    }

    @Test
    void engineStartsFromSeveralRootsWithInjectedGradients() {
        Tensor x = leaf(1, 2);
        Tensor a = x.mul(2.0);
        Tensor b = x.mul(x);
        Autograd.backward(List.of(a, b), List.of(Tensor.of(new double[] {1, 10}), Tensor.of(new double[] {1, 1})),
                false);
        // 2 * [1, 10] + 2x
        assertArrayEquals(new double[] {4, 24}, x.grad().toDoubleArray());
    }

    @Test
    void retainGradKeepsTheGradientOfANonLeaf() {
        Tensor x = leaf(1, 2);
        Tensor h = x.mul(3.0).retainGrad();
        h.mul(h).sum().backward();
        assertArrayEquals(new double[] {6, 12}, h.grad().toDoubleArray());
    }

    @Test
    void nonScalarBackwardNeedsAGradient() {
        Tensor y = leaf(1, 2).mul(2.0);
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, y::backward);
        assertTrue(e.getMessage().contains("only for scalar outputs"), e.getMessage());
        IllegalArgumentException shape = assertThrows(IllegalArgumentException.class,
                () -> y.backward(Tensor.of(new double[] {1, 2, 3})));
        assertTrue(shape.getMessage().contains("[3]") && shape.getMessage().contains("[2]"), shape.getMessage());
    }

    @Test
    void backwardOfATensorWithoutGraphFails() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> Tensor.of(new double[] {1}).backward());
        assertTrue(e.getMessage().contains("does not require grad"), e.getMessage());
    }

    @Test
    void integerTensorsCannotRequireGrad() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> Tensor.of(new long[] {1}).requiresGrad(true));
        assertTrue(e.getMessage().contains("floating point"), e.getMessage());
    }

    /** A node that hands its gradient to "the network" (a list), as distributed autograd's send node will. */
    private static final class SendNode extends Node {
        final List<Tensor> sent = new ArrayList<>();

        SendNode(Tensor input) {
            super(new Edge[] {Autograd.gradientEdge(input)}, 1);
        }

        @Override
        public String name() {
            return "SendRpcBackward";
        }

        @Override
        protected Tensor[] apply(Tensor[] gradOutputs) {
            sent.add(gradOutputs[0]);
            return new Tensor[] {gradOutputs[0].mul(2.0)};
        }
    }

    @Test
    void customNodesJoinTheGraphAsDistributedAutogradWill() {
        Tensor x = leaf(1, 2);
        Tensor h = x.mul(3.0);
        SendNode send = new SendNode(h);
        Tensor received = h.detach();
        TensorInternals.setGradFn(received, send, 0);
        received.sum().backward();
        assertEquals(1, send.sent.size());
        assertArrayEquals(new double[] {1, 1}, send.sent.get(0).toDoubleArray());
        assertArrayEquals(new double[] {6, 6}, x.grad().toDoubleArray());
    }
}
