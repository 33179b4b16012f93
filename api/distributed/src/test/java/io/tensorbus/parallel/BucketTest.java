package io.tensorbus.parallel;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import io.tensorbus.DType;
import io.tensorbus.tensor.Tensor;
import java.util.List;
import org.junit.jupiter.api.Test;

class BucketTest {
    private static final long MIB = 1024 * 1024;

    @Test
    void theFirstBucketClosesAtOneMebibyteAndLaterOnesAtTheCap() {
        List<Tensor> params = List.of(Tensor.zeros(100_000), Tensor.zeros(100_000), Tensor.zeros(300_000),
                Tensor.zeros(10));
        List<int[]> buckets = Bucket.assign(params, MIB, 25 * MIB);
        assertEquals(2, buckets.size());
        assertArrayEquals(new int[] {3, 2}, buckets.get(0));
        assertArrayEquals(new int[] {1, 0}, buckets.get(1));
    }

    @Test
    void parametersOfDifferentDtypesNeverShareABucket() {
        List<Tensor> params = List.of(Tensor.zeros(5), Tensor.zeros((int) (3 * MIB / 4)),
                Tensor.zeros(DType.FLOAT64, 10),
                Tensor.zeros(7));
        List<int[]> buckets = Bucket.assign(params, MIB, 2 * MIB);
        assertEquals(3, buckets.size());
        assertArrayEquals(new int[] {3, 1}, buckets.get(0));
        assertArrayEquals(new int[] {2}, buckets.get(1));
        assertArrayEquals(new int[] {0}, buckets.get(2));
    }

    @Test
    void viewsOfTheBufferHaveTheParametersShapesBackToBack() {
        List<Tensor> params = List.of(Tensor.zeros(2, 3), Tensor.zeros(4));
        Bucket b = new Bucket(0, new int[] {1, 0}, params);
        assertEquals(10, b.buffer.numel());
        assertArrayEquals(new int[] {4}, b.views[0].shape());
        assertArrayEquals(new int[] {2, 3}, b.views[1].shape());
        b.views[1].filli(1);
        assertEquals(6.0, b.buffer.narrow(0, 4, 6).sum().item());
        assertEquals(0.0, b.buffer.narrow(0, 0, 4).sum().item());
    }
}
