package io.tensorbus.tensor;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.tensorbus.autograd.Autograd;
import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class DispatchTest {
    @Test
    void hostKernelsComputeEveryOperationOfTheTable() {
        List<String> missing = new ArrayList<>();
        for (Method m : Kernels.class.getDeclaredMethods()) {
            if (m.isSynthetic()) {
                continue;
            }
            try {
                if (HostKernels.class.getMethod(m.getName(), m.getParameterTypes()).getDeclaringClass()
                        == Kernels.class) {
                    missing.add(m.getName());
                }
            } catch (NoSuchMethodException e) {
                missing.add(m.getName());
            }
        }
        assertTrue(missing.isEmpty(), "the host table falls to a refusal for " + missing);
    }

    @Test
    void hostOperandsReachTheHostTable() {
        Tensor a = Tensor.ones(2);
        assertSame(HostKernels.INSTANCE, Dispatch.of(a));
        assertSame(HostKernels.INSTANCE, Dispatch.of(a, Tensor.zeros(2)));
        assertSame(HostKernels.INSTANCE, Dispatch.of(List.of(a, a)));
    }

    @Test
    void aRefusalWithoutADeviceOperandSaysTheHostLacksTheKernel() {
        UnsupportedOperationException e = Dispatch.missing("exp", Tensor.ones(1));
        assertEquals("Tensor.exp has no host kernel", e.getMessage());
    }

    @Test
    void autogradStateIsMadeOnlyWhenATensorJoinsAGraph() {
        Tensor plain = Tensor.ones(3).add(1.0).reshape(3, 1);
        assertNull(plain.autograd, "a tensor outside any graph carries no autograd state");
        plain.setGrad(null);
        plain.requiresGrad(false);
        plain.detachi();
        assertNull(plain.autograd, "clearing what was never set makes no state");

        Tensor leaf = Tensor.ones(3).requiresGrad(true);
        assertNotNull(leaf.autograd);
        Tensor result = leaf.mul(2.0);
        assertNotNull(result.autograd);
        assertNotNull(result.gradFn());
        try (var ignored = Autograd.noGrad()) {
            assertNull(leaf.mul(2.0).autograd, "nothing is recorded without grad mode");
            assertNotNull(plain.view(3).autograd, "a view taken without grad mode remembers it");
        }
    }

    @Test
    void aViewRebuildsItsHistoryAfterItsBaseIsWrittenInPlace() {
        Tensor leaf = Tensor.ones(4).requiresGrad(true);
        Tensor base = leaf.mul(1.0);
        Tensor view = base.narrow(0, 0, 2);
        assertNotNull(view.gradFn());
        base.muli(3.0);
        assertEquals("AsStridedBackward0", view.gradFn().name(), "the view's history now starts at the write");
        view.sum().backward();
        assertEquals(List.of(3.0, 3.0, 0.0, 0.0), List.of(leaf.grad().getDouble(0), leaf.grad().getDouble(1),
                leaf.grad().getDouble(2), leaf.grad().getDouble(3)));
    }
}
