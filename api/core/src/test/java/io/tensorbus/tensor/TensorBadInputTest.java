package io.tensorbus.tensor;

import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.tensorbus.DType;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;

/** Every bad argument gets an exception whose message says what was wrong. */
class TensorBadInputTest {
    private static void fails(Class<? extends Throwable> type, Executable call, String... fragments) {
        Throwable e = assertThrows(type, call);
        for (String f : fragments) {
            assertTrue(e.getMessage().contains(f), "message '" + e.getMessage() + "' should contain '" + f + "'");
        }
    }

    @Test
    void shapeMismatchNamesBothShapes() {
        fails(IllegalArgumentException.class, () -> Tensor.zeros(2, 3).add(Tensor.zeros(4)), "[2, 3]", "[4]");
        fails(IllegalArgumentException.class, () -> Tensor.zeros(2, 3).mm(Tensor.zeros(2, 3)),
                "cannot be multiplied", "2x3 and 2x3");
        fails(IllegalArgumentException.class, () -> Tensor.zeros(2, 3).addi(Tensor.zeros(4, 2, 3)),
                "[2, 3]", "[4, 2, 3]");
        fails(IllegalArgumentException.class, () -> Tensor.cat(List.of(Tensor.zeros(2, 3), Tensor.zeros(3, 3)), 1),
                "[2, 3]", "[3, 3]");
    }

    @Test
    void dtypeMismatchNamesBothDtypes() {
        fails(IllegalArgumentException.class, () -> Tensor.zeros(2, 2).mm(Tensor.zeros(DType.FLOAT64, 2, 2)),
                "float32", "float64");
        fails(IllegalArgumentException.class, () -> Tensor.zeros(DType.INT64, 2).addi(Tensor.ones(2)),
                "float32", "int64");
    }

    @Test
    void badViewsAndIndicesSayWhatIsAllowed() {
        fails(IllegalArgumentException.class, () -> Tensor.zeros(2, 3).view(4, 2), "[4, 2]", "6");
        fails(IllegalArgumentException.class, () -> Tensor.zeros(2, 3).t().view(6), "reshape");
        fails(IllegalArgumentException.class, () -> Tensor.zeros(2, 3).view(-1, -1), "only one dimension");
        fails(IllegalArgumentException.class, () -> Tensor.zeros(2, 3).sum(2, false), "dimension 2", "-2 to 1");
        fails(IllegalArgumentException.class, () -> Tensor.zeros(2, 3).narrow(1, 2, 2), "exceeds");
        fails(IllegalArgumentException.class, () -> Tensor.zeros(2, 3).getDouble(0, 3), "index 3", "size 3");
        fails(IllegalArgumentException.class, () -> Tensor.zeros(2, 3).expand(4, 3, 2), "expanded size");
        fails(IllegalArgumentException.class, () -> Tensor.zeros(3).indexSelect(0, Tensor.of(new long[] {3})),
                "index 3 is out of bounds");
        fails(IllegalArgumentException.class, () -> Tensor.of(new float[] {1, 2}, 3), "holds 3", "2 values");
        fails(IllegalArgumentException.class, () -> Tensor.zeros(-1), "negative size");
        fails(IllegalStateException.class, () -> Tensor.zeros(2).item(), "one element");
    }

    @Test
    void inPlaceWriteToAnExpandedTensorIsRefused() {
        fails(IllegalArgumentException.class, () -> Tensor.zeros(3).expand(2, 3).addi(1.0), "single memory location");
    }

    @Test
    void badFactoryArguments() {
        fails(IllegalArgumentException.class, () -> Tensor.arange(0, 5, 0, DType.FLOAT32), "non-zero");
        fails(IllegalArgumentException.class, () -> Tensor.randint(new Generator(1), 3, 3, 2), "low < high");
        fails(IllegalArgumentException.class, () -> Tensor.rand(new Generator(1), DType.INT64, 2), "floating");
        fails(IllegalArgumentException.class, () -> Threads.set(0), "[1, 1024]");
        fails(IllegalArgumentException.class, () -> DType.of("complex64"), "allowed");
    }
}
