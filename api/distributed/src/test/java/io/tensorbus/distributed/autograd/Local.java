package io.tensorbus.distributed.autograd;

import io.tensorbus.autograd.Autograd;
import io.tensorbus.tensor.Tensor;
import java.util.List;
import java.util.function.BinaryOperator;

/** The gradients of a two-input computation run in one process, to compare a distributed run with. */
record Local(Tensor gradA, Tensor gradB) {
    static Local of(Tensor a, Tensor b, BinaryOperator<Tensor> loss) {
        Tensor la = a.detach().clone().requiresGrad(true);
        Tensor lb = b.detach().clone().requiresGrad(true);
        List<Tensor> g = Autograd.grad(List.of(loss.apply(la, lb)), List.of(la, lb), null, false, false);
        return new Local(g.get(0), g.get(1));
    }
}
