package io.tensorbus.tensor;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.tensorbus.DType;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;

/**
 * Behaviours where the tensor core must match PyTorch 1.13 (edge cases of dtypes, views, in-place ops,
 * threads and bad input). Each comment gives what Debian's /usr/bin/python3 (torch 1.13) printed for the
 * same program.
 */
class PyTorchSemanticsTest {
    private static void failsWithIllegalArgument(Executable call, String... fragments) {
        Throwable e = assertThrows(IllegalArgumentException.class, call);
        for (String f : fragments) {
            assertTrue(e.getMessage() != null && e.getMessage().contains(f),
                    "message '" + e.getMessage() + "' should contain '" + f + "'");
        }
    }

    // ------------------------------------------------------------ type promotion

    @Test
    void halfPrecisionOpsKeepTheirDtype() {
        // a = torch.ones(2, dtype=torch.float16)
        // (a + a).dtype, a.sum().dtype, torch.cat([a, a]).dtype  ->  float16 float16 float16
        Tensor a = Tensor.ones(DType.FLOAT16, 2);
        assertEquals(DType.FLOAT16, a.add(a).dtype());
        assertEquals(DType.FLOAT16, a.sum().dtype());
        assertEquals(DType.FLOAT16, Tensor.cat(List.of(a, a), 0).dtype());
        assertEquals(DType.BFLOAT16, Tensor.ones(DType.BFLOAT16, 2).mul(2.0).dtype());
    }

    @Test
    void zeroDimTensorDoesNotPromoteADimensionedOperandOfTheSameCategory() {
        // (torch.ones(2) * torch.tensor(2., dtype=torch.float64)).dtype  ->  torch.float32
        // (torch.ones(2, dtype=torch.int32) + torch.tensor(3)).dtype    ->  torch.int32
        assertEquals(DType.FLOAT32, Tensor.ones(2).mul(Tensor.scalar(2, DType.FLOAT64)).dtype());
        assertEquals(DType.INT32, Tensor.ones(DType.INT32, 2).add(Tensor.scalar(3, DType.INT64)).dtype());
    }

    @Test
    void boolPlusBoolIsALogicalOrThatStaysBool() {
        // b = torch.tensor([True, False]); b + b  ->  tensor([ True, False])
        Tensor b = Tensor.of(new boolean[] {true, false});
        Tensor r = b.add(b);
        assertEquals(DType.BOOL, r.dtype());
        assertArrayEquals(new long[] {1, 0}, r.toLongArray());
    }

    @Test
    void integerAddWithAFractionalAlphaIsRejected() {
        // torch.add(torch.tensor([1, 2]), torch.tensor([1, 2]), alpha=0.5)
        //   -> RuntimeError: For integral input tensors, argument alpha must not be a floating point number.
        // tensorbus truncates alpha to 0 and silently returns [1, 2].
        Tensor a = Tensor.of(new long[] {1, 2});
        failsWithIllegalArgument(() -> a.add(a, 0.5), "alpha");
    }

    @Test
    void diviByAScalarIsTrueDivisionNotMultiplicationByTheReciprocal() {
        // x = torch.tensor([49.], dtype=torch.float64); x.div_(49); x.item()  ->  1.0
        // tensorbus computes 49 * (1/49) = 0.9999999999999999; x.div(49) gives 1.0.
        Tensor x = Tensor.of(new double[] {49});
        assertEquals(x.div(49).item(), x.clone().divi(49).item(), 0.0);
        assertEquals(1.0, x.divi(49).item(), 0.0);
    }

    @Test
    void diviOfAnIntegerTensorByAScalarIsRejected() {
        // torch.ones(2, dtype=torch.long).div_(0.5)
        //   -> RuntimeError: result type Float can't be cast to the desired output type Long
        // tensorbus turns it into muli(2.0) and silently returns [2, 2].
        Tensor x = Tensor.ones(DType.INT64, 2);
        failsWithIllegalArgument(() -> x.divi(0.5), "divi");
        assertArrayEquals(new long[] {1, 1}, x.toLongArray(), "the tensor must not be changed");
    }

    @Test
    void clampOfAnIntegerTensorWithIntegerBoundsKeepsItsDtype() {
        // torch.tensor([1, 5]).clamp(0, 3)  ->  tensor([1, 3]) (int64)
        // tensorbus returns float32 (it treats integral doubles as integers elsewhere: add(3.0) stays int64).
        Tensor r = Tensor.of(new long[] {1, 5}).clamp(0, 3);
        assertEquals(DType.INT64, r.dtype());
        assertArrayEquals(new long[] {1, 3}, r.toLongArray());
    }

    // ------------------------------------------------------------ numerics

    @Test
    void reluPropagatesNaN() {
        // torch.relu(torch.tensor([float('nan')]))  ->  tensor([nan])
        Tensor r = Tensor.of(new float[] {Float.NaN, -1f, 2f}).relu();
        assertTrue(Float.isNaN(r.toFloatArray()[0]), "relu(NaN) gave " + r.toFloatArray()[0]);
        Tensor d = Tensor.of(new double[] {Double.NaN}).relu();
        assertTrue(Double.isNaN(d.item()), "relu(NaN) gave " + d.item());
    }

    @Test
    void reluBackwardIsASelectAsThresholdBackward() {
        // x = torch.tensor([nan, -1., 2., 0.], requires_grad=True); x.relu().backward(torch.tensor([5., nan, 7., nan]))
        // x.grad  ->  tensor([5., 0., 7., 0.])  (threshold_backward selects; a NaN gradient where relu is 0 gives 0)
        for (DType t : new DType[] {DType.FLOAT32, DType.FLOAT64}) {
            Tensor x = Tensor.of(new float[] {Float.NaN, -1f, 2f, 0f}).to(t).requiresGrad(true);
            x.relu().backward(Tensor.of(new float[] {5f, Float.NaN, 7f, Float.NaN}).to(t));
            assertArrayEquals(new double[] {5, 0, 7, 0}, x.grad().toDoubleArray(), t.toString());
        }
        // A long run takes the vector path: the same select there.
        float[] xs = new float[37];
        float[] gs = new float[37];
        for (int i = 0; i < xs.length; i++) {
            xs[i] = i % 3 == 0 ? -i : i;
            gs[i] = i % 5 == 0 ? Float.NaN : i + 0.5f;
        }
        Tensor x = Tensor.of(xs).requiresGrad(true);
        x.relu().backward(Tensor.of(gs));
        float[] got = x.grad().toFloatArray();
        for (int i = 0; i < xs.length; i++) {
            float want = xs[i] <= 0 ? 0f : gs[i];
            assertEquals(Float.floatToIntBits(want), Float.floatToIntBits(got[i]), "element " + i);
        }
    }

    @Test
    void int64MaxAndArgmaxAreExactAboveTwoToThe53() {
        // t = torch.tensor([2**53, 2**53 + 1]); t.max(0)  ->  values=9007199254740993, indices=1
        long big = 1L << 53;
        Tensor t = Tensor.of(new long[] {big, big + 1});
        assertEquals(big + 1, t.max(0, false).longItem());
        assertEquals(1, t.argmax(0, false).longItem());
        assertEquals(big + 1, t.max().longItem());
    }

    @Test
    void int64ToFloat32ConversionRoundsOnce() {
        // int(torch.tensor([2**54 + 2**30 + 1]).float().item()) - 2**54  ->  2147483648
        // tensorbus converts through double (2**54 + 2**30, a tie) and gets 0.
        long v = (1L << 54) + (1L << 30) + 1;
        Tensor f = Tensor.of(new long[] {v}).to(DType.FLOAT32);
        assertEquals((float) v, (float) f.item(), 0f);
    }

    @Test
    void randOfBFloat16StaysBelowOne() {
        // torch.rand(100000, dtype=torch.bfloat16, generator=g).max()  ->  tensor(0.9961, dtype=torch.bfloat16)
        // tensorbus rounds doubles in [1 - 2^-9, 1) up to 1.0 (also float16, and float32 for [1 - 2^-25, 1)).
        Tensor r = Tensor.rand(new Generator(1), DType.BFLOAT16, 100_000);
        assertTrue(r.max().item() < 1.0, "rand gave " + r.max().item() + ", outside [0, 1)");
        Tensor h = Tensor.rand(new Generator(1), DType.FLOAT16, 100_000);
        assertTrue(h.max().item() < 1.0, "rand gave " + h.max().item() + ", outside [0, 1)");
    }

    // ------------------------------------------------------------ 0-d inputs

    @Test
    void sumAndMeanOverDimZeroOfAZeroDimTensor() {
        // torch.tensor(3.).sum(0), torch.tensor(3.).mean(0)  ->  tensor(3.) tensor(3.)
        // tensorbus: ArrayIndexOutOfBoundsException in ReduceOps.dimMask.
        assertEquals(3.0, Tensor.scalar(3).sum(0, false).item(), 0.0);
        assertEquals(3.0, Tensor.scalar(3).mean(0, false).item(), 0.0);
    }

    @Test
    void catOfZeroDimTensorsSaysWhy() {
        // torch.cat([torch.tensor(1.), torch.tensor(2.)])
        //   -> RuntimeError: zero-dimensional tensor (at position 0) cannot be concatenated
        // tensorbus: ArrayIndexOutOfBoundsException.
        failsWithIllegalArgument(() -> Tensor.cat(List.of(Tensor.scalar(1), Tensor.scalar(2)), 0), "zero-dim");
    }

    @Test
    void narrowSliceAndSplitOfAZeroDimTensorSayWhy() {
        // torch.tensor(1.).narrow(0, 0, 1)  ->  RuntimeError: narrow() cannot be applied to a 0-dim tensor.
        // tensorbus: ArrayIndexOutOfBoundsException.
        failsWithIllegalArgument(() -> Tensor.scalar(1).narrow(0, 0, 1), "0-dim");
        failsWithIllegalArgument(() -> Tensor.scalar(1).slice(0, 0, 1, 1), "0-dim");
        failsWithIllegalArgument(() -> Tensor.scalar(1).split(1, 0), "0-dim");
    }

    @Test
    void gatherOnAZeroDimTensorChecksTheIndex() {
        // torch.tensor(5.).gather(0, torch.tensor(3))
        //   -> RuntimeError: index 3 is out of bounds for dimension 0 with size 1
        // tensorbus never checks the index of a 0-d gather and returns 5.
        failsWithIllegalArgument(() -> Tensor.scalar(5).gather(0, Tensor.scalar(3, DType.INT64)), "out of bounds");
    }

    // ------------------------------------------------------------ integer overflow in argument checks

    @Test
    void narrowRejectsALengthThatOverflowsTheBoundsCheck() {
        // torch.zeros(4).narrow(0, 1, 2**31 - 1)
        //   -> RuntimeError: start (1) + length (2147483647) exceeds dimension size (4).
        // tensorbus: 1 + 2147483647 overflows to a negative number, the check passes and a bogus view returns.
        failsWithIllegalArgument(() -> Tensor.zeros(4).narrow(0, 1, Integer.MAX_VALUE), "exceeds");
    }

    @Test
    void sliceWithAHugeStepKeepsTheFirstElement() {
        // torch.zeros(4)[0:4:2**31 - 1].shape  ->  torch.Size([1])
        // tensorbus: (4 + step - 1) / step overflows and gives length 0.
        assertArrayEquals(new int[] {1}, Tensor.arange(4).slice(0, 0, 4, Integer.MAX_VALUE).shape());
    }

    // ------------------------------------------------------------ input validation

    @Test
    void expandRejectsNegativeSizesOtherThanMinusOne() {
        // torch.zeros(1).expand(-2)  ->  RuntimeError (invalid size)
        // tensorbus returns a tensor of shape [-2].
        failsWithIllegalArgument(() -> Tensor.zeros(1).expand(-2), "-2");
        failsWithIllegalArgument(() -> Tensor.zeros(1).expand(-3, 1), "-3");
    }

    @Test
    void arangeRejectsANaNBound() {
        // torch.arange(0, float('nan'))  ->  RuntimeError: unsupported range: 0 -> nan
        // tensorbus returns an empty tensor.
        failsWithIllegalArgument(() -> Tensor.arange(0, Double.NaN, 1, DType.FLOAT32), "NaN");
    }

    @Test
    void setGradRejectsAGradientOfAnotherDtype() {
        // x = torch.ones(2, requires_grad=True); x.grad = torch.ones(2, dtype=torch.float64)
        //   -> RuntimeError: assigned grad has data of a different type
        Tensor x = Tensor.ones(2).requiresGrad(true);
        failsWithIllegalArgument(() -> x.setGrad(Tensor.ones(DType.FLOAT64, 2)), "float64");
    }

    @Test
    void copyiIntoAnExpandedTensorIsRejected() {
        // torch.zeros(4).expand(2, 4).copy_(torch.ones(2, 4))
        //   -> RuntimeError: unsupported operation: more than one element of the written-to tensor refers to a
        //      single memory location. Please clone() the tensor before performing the operation.
        // (addi already refuses this; copyi silently keeps whichever row was written last.)
        Tensor e = Tensor.zeros(4).expand(2, 4);
        failsWithIllegalArgument(() -> e.copyi(Tensor.arange(8).reshape(2, 4)), "single memory location");
    }

    // ------------------------------------------------------------ aliasing and thread safety

    @Test
    void inPlaceAddOfItsOwnTransposeIsRejectedNotSilentlyWrong() {
        // x = torch.tensor([[1., 2.], [3., 4.]]); x.add_(x.t())
        //   -> RuntimeError: unsupported operation: some elements of the input tensor and the written-to tensor
        //      refer to a single memory location. Please clone() the tensor before performing the operation.
        // tensorbus reads x[0][1] after writing it and returns [[2, 5], [8, 8]] (correct sum: [[2, 5], [5, 8]]).
        Tensor x = Tensor.of(new float[] {1, 2, 3, 4}, 2, 2);
        Throwable e = assertThrows(RuntimeException.class, () -> x.addi(x.t()),
                () -> "x.addi(x.t()) changed x to " + Arrays.toString(x.toFloatArray()));
        assertTrue(e.getMessage().contains("memory location"), e.getMessage());
    }

    @Test
    void parallelForNeverFailsWhileTheThreadCountChanges() throws Exception {
        // torch.set_num_threads may be called at any time; running kernels are unaffected.
        // tensorbus: parallelFor reads `pool`, Threads.set shuts that pool down, and the submit is rejected
        // (RejectedExecutionException) or the kernel otherwise fails.
        int before = Threads.get();
        AtomicBoolean stop = new AtomicBoolean();
        AtomicReference<Throwable> failure = new AtomicReference<>();
        Thread changer = new Thread(() -> {
            int i = 0;
            while (!stop.get()) {
                Threads.set(2 + (i++ & 1));
            }
        });
        changer.start();
        try {
            Tensor a = Tensor.ones(1 << 17);
            long end = System.nanoTime() + 3_000_000_000L;
            while (System.nanoTime() < end && failure.get() == null) {
                try {
                    a.add(a);
                } catch (Throwable t) {
                    failure.set(t);
                }
            }
        } finally {
            stop.set(true);
            changer.join();
            Threads.set(before);
        }
        if (failure.get() != null) {
            throw new AssertionError("a kernel failed while Threads.set ran: " + failure.get(), failure.get());
        }
    }
}
