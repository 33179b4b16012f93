package io.tensorbus.autograd;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.tensorbus.DType;
import io.tensorbus.tensor.Tensor;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import org.junit.jupiter.api.Test;

/**
 * Autograd behaviours that must match PyTorch 1.13, each with the PyTorch output (Debian's
 * /usr/bin/python3) of the same program.
 */
class AutogradSemanticsTest {
    private static Tensor leaf(double... v) {
        return Tensor.of(v).requiresGrad(true);
    }

    @Test
    void inPlaceOpOnAViewGivesItsBaseTheHistory() {
        // x = torch.zeros(4); w = torch.ones(2, requires_grad=True)
        // x[:2].add_(w); x.sum().backward(); w.grad  ->  tensor([1., 1.])
        // tensorbus: only the view gets a gradFn; x stays a leaf that doesn't require grad, so backward fails
        // (or, if x is used with other tensors that require grad, w silently gets no gradient).
        Tensor x = Tensor.zeros(4);
        Tensor w = Tensor.ones(2).requiresGrad(true);
        x.narrow(0, 0, 2).addi(w);
        assertTrue(x.requiresGrad(), "x was written from w in place and must now require grad");
        x.sum().backward();
        assertNotNull(w.grad());
        assertArrayEquals(new float[] {1, 1}, w.grad().toFloatArray());
    }

    @Test
    void copyiIntoASliceOfABufferPropagatesTheGradient() {
        // x = torch.zeros(4); w = torch.ones(2, requires_grad=True)
        // x.narrow(0, 0, 2).copy_(w * 3); (x * torch.arange(4.)).sum().backward(); w.grad  ->  tensor([0., 3.])
        Tensor x = Tensor.zeros(4);
        Tensor w = Tensor.ones(2).requiresGrad(true);
        x.narrow(0, 0, 2).copyi(w.mul(3.0));
        Tensor loss = x.mul(Tensor.arange(0, 4, 1, DType.FLOAT32)).sum();
        assertTrue(loss.requiresGrad(), "the buffer holds values computed from w");
        loss.backward();
        assertNotNull(w.grad());
        assertArrayEquals(new float[] {0, 3}, w.grad().toFloatArray());
    }

    @Test
    void viewTakenBeforeAnInPlaceOpOnItsBaseBackpropagatesThroughThatOp() {
        // x = torch.ones(4, requires_grad=True); y = x * 2; v = y[:2]; y.mul_(3)
        // v.sum().backward(); x.grad  ->  tensor([6., 6., 0., 0.])
        // tensorbus: v keeps its old NarrowBackward -> MulBackward(2) history and gives [2, 2, 0, 0]
        // although v's values (6) already include the in-place *3.
        Tensor x = Tensor.ones(4).requiresGrad(true);
        Tensor y = x.mul(2.0);
        Tensor v = y.narrow(0, 0, 2);
        y.muli(3.0);
        assertArrayEquals(new float[] {6, 6}, v.toFloatArray());
        v.sum().backward();
        assertArrayEquals(new float[] {6, 6, 0, 0}, x.grad().toFloatArray());
    }

    @Test
    void detachedViewOfALeafCanBeChangedInPlace() {
        // x = torch.ones(4, requires_grad=True); d = x[:2].detach(); d.add_(1); x
        //   -> tensor([2., 2., 1., 1.], requires_grad=True)
        // tensorbus: detach() keeps the view's base, so checkInplace refuses ("on a view of a tensor that
        // requires grad"), although the detached tensor is out of the graph.
        Tensor x = Tensor.ones(4).requiresGrad(true);
        Tensor d = x.narrow(0, 0, 2).detach();
        d.addi(1.0);
        assertArrayEquals(new float[] {2, 2, 1, 1}, x.toFloatArray());
    }

    @Test
    void gradLeavesTheNodesItDidNotRunUsableForALaterBackward() {
        // x = torch.ones(2, requires_grad=True); y = x * x; z = y.exp().sum()
        // torch.autograd.grad(z, [y]); y.sum().backward(); x.grad  ->  tensor([2., 2.])
        // tensorbus: Engine releases every node it polls, including y's MulBackward0 that grad() never ran,
        // so the second backward fails with "backward through the graph a second time".
        Tensor x = leaf(1, 1);
        Tensor y = x.mul(x);
        Tensor z = y.exp().sum();
        List<Tensor> g = Autograd.grad(List.of(z), List.of(y), null, false, false);
        assertEquals(Math.E, g.get(0).toDoubleArray()[0], 1e-12);
        y.sum().backward();
        assertArrayEquals(new double[] {2, 2}, x.grad().toDoubleArray());
    }

    @Test
    void retainGradTwiceDoesNotDoubleTheGradient() {
        // x = torch.ones(2, requires_grad=True); y = x * 2; y.retain_grad(); y.retain_grad()
        // y.sum().backward(); y.grad  ->  tensor([1., 1.])
        Tensor x = leaf(1, 1);
        Tensor y = x.mul(2.0);
        y.retainGrad();
        y.retainGrad();
        y.sum().backward();
        assertArrayEquals(new double[] {1, 1}, y.grad().toDoubleArray());
    }

    @Test
    void powGradientIsZeroWhereTheExponentIsZero() {
        // x = torch.tensor([0.], requires_grad=True); e = torch.tensor([0.], requires_grad=True)
        // (x ** e).sum().backward(); x.grad, e.grad  ->  tensor([0.]) tensor([0.])
        // tensorbus: g * e * x^(e-1) = 0 * 0 * inf = NaN.
        Tensor x = leaf(0);
        Tensor e = leaf(0);
        x.pow(e).sum().backward();
        assertArrayEquals(new double[] {0}, x.grad().toDoubleArray());
        assertArrayEquals(new double[] {0}, e.grad().toDoubleArray());
    }

    @Test
    void fullMaxGradientGoesToTheNaNItReturned() {
        // x = torch.tensor([1., float('nan'), 2.], requires_grad=True); x.max().backward(); x.grad
        //   -> tensor([0., 1., 0.])
        // tensorbus: the mask x == NaN is all false, 0 * (g / 0) = NaN everywhere.
        Tensor x = leaf(1, Double.NaN, 2);
        x.max().backward();
        assertArrayEquals(new double[] {0, 1, 0}, x.grad().toDoubleArray());
    }

    @Test
    void concurrentBackwardsIntoASharedLeafLoseNoGradient() throws Exception {
        // PyTorch runs backward from several threads at once and AccumulateGrad holds a lock per leaf:
        // w = torch.zeros(1000, requires_grad=True); 4 threads x 500 times w.sum().backward()  ->  w.grad == 2000
        // tensorbus: AccumulateGrad.accumulate is unsynchronised (check-then-set of .grad, then addi), so
        // updates from concurrent backward passes are lost.
        Tensor w = Tensor.zeros(1000).requiresGrad(true);
        int threads = 4;
        int rounds = 500;
        CountDownLatch start = new CountDownLatch(1);
        List<Thread> ts = new ArrayList<>();
        List<Throwable> errors = Collections.synchronizedList(new ArrayList<>());
        for (int t = 0; t < threads; t++) {
            Thread th = new Thread(() -> {
                try {
                    start.await();
                    for (int i = 0; i < rounds; i++) {
                        w.mul(1.0).sum().backward();
                    }
                } catch (Throwable e) {
                    errors.add(e);
                }
            });
            th.start();
            ts.add(th);
        }
        start.countDown();
        for (Thread th : ts) {
            th.join();
        }
        assertTrue(errors.isEmpty(), "errors: " + errors);
        float[] g = w.grad().toFloatArray();
        for (float v : g) {
            assertEquals(threads * rounds, v, 0f);
        }
    }
}
