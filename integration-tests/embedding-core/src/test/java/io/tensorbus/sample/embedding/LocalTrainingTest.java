package io.tensorbus.sample.embedding;

import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.tensorbus.DType;
import io.tensorbus.nn.Linear;
import io.tensorbus.nn.MSELoss;
import io.tensorbus.optim.SGD;
import io.tensorbus.tensor.Generator;
import io.tensorbus.tensor.Tensor;
import org.junit.jupiter.api.Test;

/**
 * A service that trains locally with tensorbus-core alone: tensors, autograd, nn and optim work, and no
 * Vert.x (nor Netty) came with them.
 */
class LocalTrainingTest {
    @Test
    void aFewStepsOfLinearRegressionLowerTheLoss() {
        Generator g = new Generator(7);
        Tensor x = Tensor.randn(g, DType.FLOAT32, 64, 3);
        Tensor w = Tensor.of(new float[] {2f, -1f, 0.5f}, 3, 1);
        Tensor y = x.matmul(w).add(0.25);
        Linear model = new Linear(3, 1, true, g);
        SGD sgd = new SGD(model.parameters(), 0.1);
        MSELoss mse = new MSELoss();
        double first = Double.NaN;
        double last = Double.NaN;
        for (int step = 0; step < 30; step++) {
            sgd.zeroGrad();
            Tensor loss = mse.forward(model.forward(x), y);
            loss.backward();
            sgd.step();
            last = loss.item();
            first = step == 0 ? last : first;
        }
        assertTrue(last < first / 10, "loss went from " + first + " to " + last);
    }

    @Test
    void noVertxNorNettyIsOnTheClassPath() {
        assertThrows(ClassNotFoundException.class, () -> Class.forName("io.vertx.core.Vertx"));
        assertThrows(ClassNotFoundException.class, () -> Class.forName("io.netty.buffer.ByteBuf"));
        assertThrows(ClassNotFoundException.class, () -> Class.forName("io.tensorbus.distributed.ProcessGroup"));
    }
}
