package io.tensorbus.internal.distributed.autograd;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import io.tensorbus.DType;
import io.tensorbus.autograd.Autograd;
import io.tensorbus.internal.autograd.Engine;
import io.tensorbus.internal.autograd.GraphTask;
import io.tensorbus.internal.tensor.TensorInternals;
import io.tensorbus.tensor.Tensor;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The seed's example (0x05) with its RPCs played by hand between two simulated workers: worker0 sends t1 and
 * t2, worker1 adds them and sends t3 back, worker0 computes {@code (t3 * t4).sum()}. FAST mode's backward from
 * worker0: each recv function ships its gradients to the sender's send function of the same message id, whose
 * pass runs them on, and the gradients land in each worker's context, never in {@code .grad}.
 */
class SendRecvBackwardTest {
    /** A gradient on its way to a worker's send function: what {@code dist_autograd.propagate} carries. */
    private record Propagate(int toWorker, long messageId, Tensor[] grads) {
    }

    @Test
    void theSeedsExampleGetsItsGradientsAcrossTwoWorkers() {
        Deque<Propagate> network = new ArrayDeque<>();
        RecvBackward.GradientSink wire = (to, id, grads) -> network.add(new Propagate(to, id, grads));
        ContextContainer w0 = new ContextContainer(0);
        ContextContainer w1 = new ContextContainer(1);
        DistAutogradContext c0 = w0.newContext();
        DistAutogradContext c1 = w1.getOrCreate(c0.id());

        Tensor t1 = Tensor.of(new float[] {1f, 2f}, 2).requiresGrad(true);
        Tensor t2 = Tensor.of(new float[] {3f, 4f}, 2).requiresGrad(true);
        Tensor t4 = Tensor.of(new float[] {5f, 6f}, 2).requiresGrad(true);
        // worker0 -> worker1: rpc_sync("worker1", my_add, t1, t2)
        long m1 = w0.newMessageId();
        SendBackward send0 = new SendBackward(m1, 1, "m1", List.of(t1, t2));
        RecvBackward recv1 = new RecvBackward(0, m1, 2, wire);
        Tensor r1 = received(t1, recv1, 0);
        Tensor r2 = received(t2, recv1, 1);
        Tensor t3There = r1.add(r2);
        // worker1 -> worker0: the result t3
        long m2 = w1.newMessageId();
        SendBackward send1 = new SendBackward(m2, 0, "m2", List.of(t3There));
        Tensor t3 = received(t3There, new RecvBackward(1, m2, 1, wire), 0);
        Tensor loss = t3.mul(t4).sum();

        GraphTask on0 = new GraphTask(List.of(Autograd.gradientEdge(loss)), List.of(send0), into(c0));
        GraphTask on1 = new GraphTask(List.of(), List.of(send1), into(c1));
        on0.run(List.of(Tensor.ones(DType.FLOAT32)));
        Map<Integer, GraphTask> workers = Map.of(0, on0, 1, on1);
        Map<Long, SendBackward> sends = Map.of(m1, send0, m2, send1);
        int hops = 0;
        while (!network.isEmpty()) {
            Propagate p = network.poll();
            workers.get(p.toWorker()).feed(sends.get(p.messageId()), p.grads());
            hops++;
        }

        assertEquals(2, hops, "worker0 -> worker1 (d loss / d t3), worker1 -> worker0 (d t3 / d t1, d t2)");
        Map<Tensor, Tensor> g0 = c0.gradients();
        assertArrayEquals(new float[] {5f, 6f}, g0.get(t1).toFloatArray(), "d loss / d t1 = t4");
        assertArrayEquals(new float[] {5f, 6f}, g0.get(t2).toFloatArray(), "d loss / d t2 = t4");
        assertArrayEquals(new float[] {4f, 6f}, g0.get(t4).toFloatArray(), "d loss / d t4 = t1 + t2");
        assertEquals(0, c1.gradients().size(), "worker1 holds no leaf of this graph");
        assertNull(t1.grad());
    }

    /** The receiver's copy of {@code sent}, whose history is the message's recv function (input {@code i}). */
    private static Tensor received(Tensor sent, RecvBackward recv, int i) {
        Tensor copy = sent.detach().clone();
        TensorInternals.setGradFn(copy, recv, i);
        return copy;
    }

    private static Engine.Options into(DistAutogradContext context) {
        return new Engine.Options(false, context::accumulateGrad, List.of());
    }
}
