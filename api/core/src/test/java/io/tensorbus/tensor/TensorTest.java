package io.tensorbus.tensor;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.tensorbus.DType;
import io.tensorbus.Device;
import io.tensorbus.autograd.AccumulateGrad;
import java.lang.reflect.Method;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

class TensorTest {
    @Test
    void engineInternalsAreNotOnThePublicFace() {
        // PyTorch's AutogradMeta and the storage are reached through internal.tensor.TensorInternals.
        for (Method m : Tensor.class.getMethods()) {
            assertFalse(m.getName().equals("setGradFn") || m.getName().equals("gradAccumulator")
                    || m.getName().equals("storage"), m + " is public");
            assertFalse(m.getReturnType() == Storage.class
                    || m.getReturnType() == AccumulateGrad.class, m + " exposes an internal");
        }
    }

    @Test
    void storageIsOffHeapAnd64ByteAligned() {
        for (int n : new int[] {1, 3, 17, 1000}) {
            Tensor t = Tensor.zeros(n);
            assertTrue(t.storage().segment().isNative());
            assertEquals(0, t.storage().segment().address() % 64, "size " + n);
        }
    }

    @Test
    void factoriesFillAsPyTorch() {
        assertArrayEquals(new double[] {0, 0}, Tensor.zeros(DType.FLOAT64, 2).toDoubleArray());
        assertArrayEquals(new float[] {1, 1, 1}, Tensor.ones(3).toFloatArray());
        assertArrayEquals(new long[] {7, 7}, Tensor.full(7, DType.INT64, 2).toLongArray());
        assertArrayEquals(new long[] {0, 1, 2, 3}, Tensor.arange(4).toLongArray());
        assertArrayEquals(new double[] {1, 1.5, 2, 2.5}, Tensor.arange(1, 3, 0.5, DType.FLOAT64).toDoubleArray());
        assertArrayEquals(new double[] {0, 0.25, 0.5, 0.75, 1},
                Tensor.linspace(0, 1, 5, DType.FLOAT64).toDoubleArray());
        assertArrayEquals(new float[] {1, 0, 0, 0, 1, 0}, Tensor.eye(2, 3, DType.FLOAT32).toFloatArray());
        assertEquals(DType.FLOAT32, Tensor.zeros(2).dtype());
        assertEquals(Device.CPU, Tensor.zeros(2).device());
    }

    @Test
    void fillWritesEveryElementOfAContiguousRegionAndNothingBesideIt() {
        for (DType dtype : new DType[] {DType.FLOAT32, DType.FLOAT64, DType.INT64, DType.FLOAT16, DType.BOOL}) {
            for (int n : new int[] {1, 2, 3, 1000, 65537}) {
                Tensor base = Tensor.full(-2, dtype, n + 2);
                Tensor inner = base.narrow(0, 1, n);
                inner.filli(1);
                double[] got = base.to(DType.FLOAT64).toDoubleArray();
                double[] want = new double[n + 2];
                Arrays.fill(want, 1);
                want[0] = dtype == DType.BOOL ? 1 : -2;
                want[n + 1] = want[0];
                assertArrayEquals(want, got, dtype + " n=" + n);
            }
        }
        // A strided view keeps the element-by-element path: only every other element changes.
        Tensor grid = Tensor.zeros(4, 3);
        grid.transpose(0, 1).narrow(0, 0, 1).filli(5);
        assertArrayEquals(new float[] {5, 0, 0, 5, 0, 0, 5, 0, 0, 5, 0, 0}, grid.toFloatArray());
    }

    @Test
    void randomFactoriesAreReproducibleFromTheSeed() {
        assertArrayEquals(Tensor.randn(new Generator(5), DType.FLOAT32, 10).toFloatArray(),
                Tensor.randn(new Generator(5), DType.FLOAT32, 10).toFloatArray());
        assertNotEquals(Tensor.rand(new Generator(5), DType.FLOAT64, 1).item(),
                Tensor.rand(new Generator(6), DType.FLOAT64, 1).item());
        Tensor u = Tensor.rand(new Generator(1), DType.FLOAT64, 10000);
        assertTrue(u.min().item() >= 0 && u.max().item() < 1);
        assertEquals(0.5, u.mean().item(), 0.02);
        Tensor n = Tensor.randn(new Generator(2), DType.FLOAT64, 10000);
        assertEquals(0, n.mean().item(), 0.05);
        assertEquals(1, n.mul(n).mean().item(), 0.05);
        long[] r = Tensor.randint(new Generator(3), -2, 3, 1000).toLongArray();
        for (long v : r) {
            assertTrue(v >= -2 && v < 3);
        }
        long[] perm = Tensor.randperm(new Generator(4), 6).toLongArray();
        assertArrayEquals(new long[] {0, 1, 2, 3, 4, 5}, Arrays.stream(perm).sorted().toArray());
    }

    @Test
    void viewsShareStorageWithTheirBase() {
        Tensor t = Tensor.arange(0, 12, 1, DType.FLOAT32).view(3, 4);
        Tensor col = t.select(1, 2);
        Tensor tr = t.t();
        assertSame(t.storage(), col.storage());
        assertSame(t.storage(), tr.storage());
        assertFalse(tr.isContiguous());
        col.set(100, 1);
        assertEquals(100, t.getDouble(1, 2));
        assertEquals(100, tr.getDouble(2, 1));
        assertArrayEquals(new float[] {0, 4, 8, 1, 5, 9, 2, 100, 10, 3, 7, 11}, tr.contiguous().toFloatArray());
        assertArrayEquals(new int[] {3, 3}, t.narrow(1, 1, 3).shape());
        assertArrayEquals(new int[] {4, 1}, t.narrow(1, 1, 3).strides());
        assertEquals(1, t.narrow(1, 1, 3).storageOffset());
    }

    @Test
    void reshapeCopiesOnlyWhenTheLayoutNeedsIt() {
        Tensor t = Tensor.arange(0, 24, 1, DType.FLOAT32).view(2, 3, 4);
        assertSame(t.storage(), t.reshape(6, 4).storage());
        assertSame(t.storage(), t.narrow(0, 1, 1).reshape(12).storage());
        Tensor tr = t.transpose(1, 2);
        assertNotEquals(t.storage(), tr.reshape(-1).storage());
        assertArrayEquals(new int[] {2, 12}, t.flatten(1, 2).shape());
        assertArrayEquals(new int[] {24}, t.flatten().shape());
        assertArrayEquals(new int[] {3, 2, 4}, t.view(3, -1, 4).shape());
    }

    @Test
    void expandSqueezeAndUnsqueezeChangeOnlyTheShape() {
        Tensor v = Tensor.of(new float[] {1, 2, 3});
        Tensor e = v.unsqueeze(0).expand(4, -1);
        assertArrayEquals(new int[] {4, 3}, e.shape());
        assertArrayEquals(new int[] {0, 1}, e.strides());
        assertArrayEquals(new int[] {3}, e.narrow(0, 0, 1).squeeze().shape());
        assertArrayEquals(new int[] {3, 1}, v.unsqueeze(-1).shape());
        assertArrayEquals(new int[] {1, 3}, Tensor.zeros(1, 1, 3).squeeze(0).shape());
    }

    @Test
    void splitChunkCatAndStackRoundTrip() {
        Tensor t = Tensor.arange(0, 10, 1, DType.FLOAT32).view(2, 5);
        List<Tensor> parts = t.split(2, 1);
        assertEquals(3, parts.size());
        assertArrayEquals(new int[] {2, 1}, parts.get(2).shape());
        assertArrayEquals(t.toFloatArray(), Tensor.cat(parts, 1).toFloatArray());
        List<Tensor> chunks = Tensor.arange(0, 7, 1, DType.FLOAT32).chunk(3, 0);
        assertEquals(List.of(3, 3, 1), chunks.stream().map(c -> c.size(0)).toList());
        Tensor s = Tensor.stack(List.of(Tensor.ones(2), Tensor.zeros(2)), 1);
        assertArrayEquals(new float[] {1, 0, 1, 0}, s.toFloatArray());
        Tensor mixed = Tensor.cat(List.of(Tensor.ones(1), Tensor.of(new double[] {2})), 0);
        assertEquals(DType.FLOAT64, mixed.dtype());
    }

    @Test
    void broadcastingFollowsNumPy() {
        Tensor a = Tensor.arange(0, 3, 1, DType.FLOAT32).view(3, 1);
        Tensor b = Tensor.arange(0, 4, 1, DType.FLOAT32);
        Tensor c = a.mul(b.add(1.0));
        assertArrayEquals(new int[] {3, 4}, c.shape());
        assertArrayEquals(new float[] {0, 0, 0, 0, 1, 2, 3, 4, 2, 4, 6, 8}, c.toFloatArray());
        assertArrayEquals(new float[] {1, 2, 3, 1, 2, 3}, Tensor.ones(2, 1).mul(Tensor.of(new float[] {1, 2, 3}))
                .toFloatArray());
    }

    @Test
    void typePromotionFollowsPyTorch() {
        Tensor i = Tensor.of(new long[] {1, 2});
        assertEquals(DType.INT64, i.add(i).dtype());
        assertEquals(DType.INT64, i.add(1.0).dtype());
        assertEquals(DType.FLOAT32, i.add(0.5).dtype());
        assertEquals(DType.FLOAT32, i.div(i).dtype());
        assertEquals(DType.FLOAT32, i.add(Tensor.ones(2)).dtype());
        assertEquals(DType.FLOAT64, Tensor.ones(2).add(Tensor.ones(DType.FLOAT64, 2)).dtype());
        assertEquals(DType.INT64, Tensor.of(new int[] {1, 2}).sum().dtype());
        assertEquals(DType.INT64, Tensor.of(new int[] {1}).add(Tensor.of(new long[] {1})).dtype());
        assertArrayEquals(new float[] {0.5f, 1}, i.div(2.0).toFloatArray());
    }

    @Test
    void halfPrecisionStorageConvertsBothWays() {
        Tensor x = Tensor.of(new float[] {1.5f, -2.25f, 65504f, 1e-3f});
        Tensor h = x.to(DType.FLOAT16);
        Tensor b = x.to(DType.BFLOAT16);
        assertEquals(2, h.storage().byteSize() / 4);
        assertArrayEquals(new float[] {1.5f, -2.25f, 65504f, 0.0010004044f}, h.toFloatArray());
        float[] back = b.toFloatArray();
        assertEquals(1.5f, back[0]);
        assertEquals(-2.25f, back[1]);
        assertEquals(65536f, back[2]);
        assertEquals(1e-3, back[3], 1e-5);
    }

    @Test
    void reductionsAndArgmaxAlongDimensions() {
        Tensor t = Tensor.of(new float[] {1, 5, 3, 4, 2, 6}, 2, 3);
        assertArrayEquals(new float[] {5, 7, 9}, t.sum(0, false).toFloatArray());
        assertArrayEquals(new int[] {2, 1}, t.sum(1, true).shape());
        assertArrayEquals(new float[] {3, 4}, t.mean(1, false).toFloatArray());
        assertArrayEquals(new float[] {5, 6}, t.max(1, false).toFloatArray());
        assertArrayEquals(new long[] {1, 2}, t.argmax(1, false).toLongArray());
        assertArrayEquals(new long[] {0, 1, 0}, t.argmin(0, false).toLongArray());
        assertEquals(5, t.argmax().longItem());
        assertEquals(1, t.min().item());
        assertEquals(21, t.sum().item());
    }

    @Test
    void sumsOverLeadingAndTrailingDimensionsMatchALoop() {
        int n = 3;
        int c = 4;
        int hw = 35;
        float[] data = new float[n * c * hw];
        for (int i = 0; i < data.length; i++) {
            data[i] = (float) Math.sin(i * 0.37) * (i % 7 + 1);
        }
        Tensor t = Tensor.of(data, n, c, 5, 7);
        // A convolution's bias gradient: over N, H and W, read in place (no permuted copy).
        float[] want = new float[c];
        for (int ci = 0; ci < c; ci++) {
            double acc = 0;
            for (int ni = 0; ni < n; ni++) {
                for (int k = 0; k < hw; k++) {
                    acc += data[(ni * c + ci) * hw + k];
                }
            }
            want[ci] = (float) acc;
        }
        Tensor bias = t.sum(new int[] {0, 2, 3}, true);
        assertArrayEquals(new int[] {1, c, 1, 1}, bias.shape());
        assertArrayEquals(want, bias.toFloatArray(), 1e-5f);
        // The same sums from a strided view of the same values take the permuted-copy path.
        Tensor strided = t.permute(1, 0, 2, 3).contiguous().permute(1, 0, 2, 3);
        assertArrayEquals(want, strided.sum(new int[] {0, 2, 3}, false).toFloatArray(), 1e-5f);
        assertArrayEquals(t.sum().toFloatArray(), t.sum(new int[] {0, 1, 2, 3}, false).toFloatArray(), 1e-3f);
        Tensor x = t.detach().requiresGrad(true);
        x.sum(new int[] {0, 2, 3}, false).mul(Tensor.of(new float[] {1, 2, 3, 4})).sum().backward();
        assertEquals(3f, x.grad().toFloatArray()[2 * hw + 5]);
    }

    @Test
    void softmaxIsStableForLargeLogits() {
        Tensor s = Tensor.of(new float[] {1000, 1000, -1000}).softmax(0);
        assertArrayEquals(new float[] {0.5f, 0.5f, 0}, s.toFloatArray(), 1e-6f);
        Tensor ls = Tensor.of(new float[] {1000, 0}).logSoftmax(0);
        assertEquals(0, ls.getDouble(0), 1e-6);
        assertEquals(-1000, ls.getDouble(1), 1e-3);
    }

    @Test
    void softmaxNanPoisonsOnlyItsOwnSlice() {
        // Slices along dim 1 of [2, 2, 2]: the NaN sits in slice (0, *, 0) and leaves the other three finite.
        Tensor x = Tensor.of(new float[] {Float.NaN, 1, 2, 3, 4, 5, 6, 7}, 2, 2, 2);
        float[] s = x.softmax(1).toFloatArray();
        assertTrue(Float.isNaN(s[0]) && Float.isNaN(s[2]));
        assertEquals(1, s[1] + s[3], 1e-6f);
        assertEquals(1, s[4] + s[6], 1e-6f);
        assertTrue(Float.isNaN(x.logSoftmax(1).toFloatArray()[2]));
    }

    @Test
    void softmaxOfAContiguousViewReadsTheViewsOwnElements() {
        // Rows 1..2 of a [3, 4] tensor: contiguous, but 4 elements into their storage, in forward and backward.
        Tensor base = Tensor.of(new float[] {9, 9, 9, 9, 1, 2, 3, 4, 0, 1, 0, 1}, 3, 4);
        Tensor rows = base.narrow(0, 1, 2);
        assertArrayEquals(rows.clone().logSoftmax(1).toFloatArray(), rows.logSoftmax(1).toFloatArray());
        assertArrayEquals(rows.clone().softmax(1).toFloatArray(), rows.softmax(1).toFloatArray());
        Tensor x = Tensor.of(new float[] {1, 2, 3, 4}, 1, 4).requiresGrad(true);
        Tensor g = Tensor.of(new float[] {5, 5, 5, 5, 1, 0, 0, 2}, 2, 4);
        x.logSoftmax(1).backward(g.narrow(0, 1, 1));
        Tensor y = Tensor.of(new float[] {1, 2, 3, 4}, 1, 4).requiresGrad(true);
        y.logSoftmax(1).backward(g.narrow(0, 1, 1).clone());
        assertArrayEquals(y.grad().toFloatArray(), x.grad().toFloatArray());
    }

    @Test
    void softmaxKeepsHalfDtypeAndTurnsIntegersIntoFloat() {
        Tensor h = Tensor.of(new float[] {0, (float) Math.log(3)}).to(DType.FLOAT16).softmax(0);
        assertEquals(DType.FLOAT16, h.dtype());
        assertArrayEquals(new double[] {0.25, 0.75}, h.toDoubleArray(), 1e-3);
        Tensor i = Tensor.of(new long[] {0, 0}).logSoftmax(0);
        assertEquals(DType.FLOAT32, i.dtype());
        assertArrayEquals(new float[] {(float) -Math.log(2), (float) -Math.log(2)}, i.toFloatArray(), 1e-6f);
        assertEquals(0, Tensor.scalar(5).logSoftmax(0).getDouble(), 0);
    }

    @Test
    void oneHotAndScatter() {
        Tensor oh = Tensor.oneHot(Tensor.of(new long[] {2, 0}), 3);
        assertArrayEquals(new long[] {0, 0, 1, 1, 0, 0}, oh.toLongArray());
        Tensor s = Tensor.zeros(2, 3).scatter(1, Tensor.of(new long[] {1, 2}, 2, 1), 7.0);
        assertArrayEquals(new float[] {0, 7, 0, 0, 0, 7}, s.toFloatArray());
    }

    @Test
    void scatterOfInt64KeepsValuesPastTwoToThe53Exactly() {
        long big = (1L << 53) + 1;
        Tensor s = Tensor.zeros(DType.INT64, 3).scatter(0, Tensor.of(new long[] {2, 0}, 2),
                Tensor.of(new long[] {big, -big}, 2));
        assertArrayEquals(new long[] {-big, 0, big}, s.toLongArray());
    }

    @Test
    void inPlaceOpsWriteThroughViewsAndBumpTheVersion() {
        Tensor t = Tensor.zeros(2, 3);
        int v0 = t.storage().version();
        t.select(0, 1).addi(Tensor.of(new float[] {1, 2, 3}));
        t.narrow(1, 0, 1).muli(5.0);
        t.divi(2.0);
        assertArrayEquals(new float[] {0, 0, 0, 2.5f, 1, 1.5f}, t.toFloatArray());
        assertTrue(t.storage().version() > v0);
        t.copyi(Tensor.of(new float[] {9, 8, 7}));
        assertArrayEquals(new float[] {9, 8, 7, 9, 8, 7}, t.toFloatArray());
        t.zeroi();
        assertEquals(0, t.sum().item());
    }

    @Test
    void toStringPrintsLikePyTorch() {
        assertEquals("tensor([[1., 2.],\n        [3., 4.]], shape=[2, 2], dtype=float32)",
                Tensor.of(new float[] {1, 2, 3, 4}, 2, 2).toString());
        assertEquals("tensor([0.5000, 0.2500], shape=[2], dtype=float64, requires_grad=True)",
                Tensor.of(new double[] {0.5, 0.25}).requiresGrad(true).toString());
        assertEquals("tensor(3, shape=[], dtype=int64)", Tensor.full(3, DType.INT64).toString());
        String big = Tensor.zeros(2000).toString();
        assertTrue(big.startsWith("tensor([0., 0., 0., ..., 0., 0., 0.], shape=[2000]"), big);
        String grad = Tensor.ones(1).requiresGrad(true).mul(2.0).toString();
        assertTrue(grad.endsWith("grad_fn=<MulBackward1>)"), grad);
    }

    @Test
    void elementAccessAndItem() {
        Tensor t = Tensor.of(new long[] {1, 2, 3, 4}, 2, 2);
        assertEquals(3, t.getLong(1, 0));
        assertEquals(4, t.getDouble(-1, -1));
        assertEquals(2, t.get(0).get(1).longItem());
        assertEquals(Long.MAX_VALUE, Tensor.of(new long[] {Long.MAX_VALUE}).longItem());
    }

    @Test
    void matmulMatchesHandComputedProducts() {
        Tensor a = Tensor.of(new float[] {1, 2, 3, 4, 5, 6}, 2, 3);
        Tensor b = Tensor.of(new float[] {1, 0, 0, 1, 1, 1}, 3, 2);
        assertArrayEquals(new float[] {4, 5, 10, 11}, a.mm(b).toFloatArray());
        assertArrayEquals(new float[] {4, 5, 10, 11}, a.matmul(b.t().contiguous().t()).toFloatArray());
        assertArrayEquals(new float[] {14, 32}, a.matmul(Tensor.of(new float[] {1, 2, 3})).toFloatArray());
        Tensor i = Tensor.of(new long[] {1, 2, 3, 4}, 2, 2);
        assertArrayEquals(new long[] {7, 10, 15, 22}, i.mm(i).toLongArray());
    }

    @Test
    void devicesParseAsPyTorchSpellsThem() {
        assertEquals(Device.CPU, Device.parse("cpu"));
        assertEquals(Device.cuda(1), Device.parse("cuda:1"));
        assertEquals("opencl:0", Device.opencl(0).toString());
        assertTrue(Device.parse("cpu").isCpu());
    }
}
