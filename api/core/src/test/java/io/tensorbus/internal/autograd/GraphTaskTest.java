package io.tensorbus.internal.autograd;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.tensorbus.DType;
import io.tensorbus.autograd.Autograd;
import io.tensorbus.autograd.Edge;
import io.tensorbus.autograd.Node;
import io.tensorbus.tensor.Tensor;
import java.util.Arrays;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * A backward pass whose gradients arrive in two parts, as distributed autograd runs the seed's example on
 * worker0: the local part from the loss, and later the gradient of {@code t3} that worker1 sends back for the
 * send function of {@code t1 + t2}'s arguments.
 */
class GraphTaskTest {

    /** A send function: its gradient comes from another worker, and goes on to the tensors that were sent. */
    private static final class SendBackward extends Node {
        SendBackward(Tensor... sent) {
            super(edges(sent), 1);
        }

        private static Edge[] edges(Tensor[] sent) {
            Edge[] e = new Edge[sent.length];
            for (int i = 0; i < sent.length; i++) {
                e[i] = Autograd.gradientEdge(sent[i]);
            }
            return e;
        }

        @Override
        public String name() {
            return "SendRpcBackward";
        }

        @Override
        protected Tensor[] apply(Tensor[] gradOutputs) {
            Tensor[] out = new Tensor[nextEdges().size()];
            Arrays.fill(out, gradOutputs[0]);
            return out;
        }
    }

    private static Tensor leaf(float... v) {
        return Tensor.of(v, v.length).requiresGrad(true);
    }

    @Test
    void aLaterRootRunsWhenItsGradientIsFedAndAccumulatesIntoTheCallersMap() {
        Tensor t1 = leaf(1f, 2f);
        Tensor t2 = leaf(3f, 4f);
        Tensor t4 = leaf(5f, 6f);
        SendBackward send = new SendBackward(t1, t2);
        // What worker1's add returned, received here: a tensor whose history is worker1's.
        Tensor t3 = Tensor.of(new float[] {4f, 6f}, 2);
        Tensor loss = t3.mul(t4).sum();
        Map<Tensor, Tensor> grads = new IdentityHashMap<>();
        Engine.Options options = new Engine.Options(false, (t, g) -> grads.merge(t, g, Tensor::add), List.of());
        GraphTask task = new GraphTask(List.of(Autograd.gradientEdge(loss)), List.of(send), options);
        task.run(List.of(Tensor.ones(DType.FLOAT32)));
        assertEquals(1, grads.size(), "only t4 before the remote gradient arrives");
        assertArrayEquals(new float[] {4f, 6f}, grads.get(t4).toFloatArray());
        task.feed(send, new Tensor[] {t4.detach()});  // d loss / d t3 = t4, sent back by worker1
        assertArrayEquals(new float[] {5f, 6f}, grads.get(t1).toFloatArray());
        assertArrayEquals(new float[] {5f, 6f}, grads.get(t2).toFloatArray());
        assertNull(t1.grad(), ".grad is untouched");
    }

    @Test
    void feedingANodeOutsideThePassOrOfTheWrongArityIsRefused() {
        Tensor x = leaf(1f);
        SendBackward inPass = new SendBackward(x);
        SendBackward other = new SendBackward(leaf(2f));
        GraphTask task = new GraphTask(List.of(), List.of(inPass), new Engine.Options(false, (t, g) -> { }, List.of()));
        IllegalArgumentException outside = assertThrows(IllegalArgumentException.class,
                () -> task.feed(other, new Tensor[] {Tensor.ones(DType.FLOAT32, 1)}));
        assertTrue(outside.getMessage().contains("not part of this backward pass"), outside.getMessage());
        IllegalArgumentException arity = assertThrows(IllegalArgumentException.class,
                () -> task.feed(inPass, new Tensor[0]));
        assertTrue(arity.getMessage().contains("takes 1 gradients, got 0"), arity.getMessage());
    }
}
