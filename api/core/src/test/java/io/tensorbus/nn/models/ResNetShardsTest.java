package io.tensorbus.nn.models;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.tensorbus.DType;
import io.tensorbus.nn.Sequential;
import io.tensorbus.tensor.Generator;
import io.tensorbus.tensor.Tensor;
import org.junit.jupiter.api.Test;

/** A ResNet cut into a head and a tail for a pipeline. */
class ResNetShardsTest {
    @Test
    void headThenTailIsTheWholeModelAtEveryCut() {
        ResNet model = new ResNet(ResNet.Block.BOTTLENECK, new int[] {1, 2, 1, 1}, 5, 4, new Generator(3));
        model.eval();
        Tensor x = Tensor.randn(new Generator(4), DType.FLOAT32, 2, 3, 32, 32);
        Tensor whole = model.forward(x);
        for (int cut = 0; cut <= 4; cut++) {
            assertArrayEquals(whole.toFloatArray(), model.tail(cut).forward(model.head(cut).forward(x)).toFloatArray(),
                    "cut after " + cut + " stages");
        }
        assertEquals(model.parameters().size(), model.head(2).parameters().size()
                + model.tail(2).parameters().size(), "the seed's two shards share out every parameter");
    }

    @Test
    void theSequentialFormHasALayerPerBlockAndComputesTheModel() {
        ResNet model = new ResNet(ResNet.Block.BOTTLENECK, new int[] {1, 2, 1, 1}, 5, 4, new Generator(3));
        model.eval();
        Tensor x = Tensor.randn(new Generator(4), DType.FLOAT32, 2, 3, 32, 32);
        Sequential layers = model.sequential();
        assertEquals(4 + 5 + 3, layers.size(), "stem, five blocks, pooling, flattening, classifier");
        assertArrayEquals(model.forward(x).toFloatArray(), layers.forward(x).toFloatArray());
        assertEquals(model.parameters().size(), layers.parameters().size());
    }

    @Test
    void aCutOutsideTheFourStagesIsRefused() {
        ResNet model = new ResNet(ResNet.Block.BASIC, new int[] {1, 1, 1, 1}, 3, 4, null);
        assertThrows(IllegalArgumentException.class, () -> model.head(5));
        assertThrows(IllegalArgumentException.class, () -> model.tail(-1));
    }
}
