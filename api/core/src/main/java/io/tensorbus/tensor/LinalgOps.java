package io.tensorbus.tensor;

import io.tensorbus.DType;
import io.tensorbus.autograd.Autograd;
import io.tensorbus.autograd.SavedTensor;
import io.tensorbus.internal.tensor.Gemm;
import io.tensorbus.internal.tensor.Shapes;
import java.util.Arrays;

/** Matrix products: {@code mm}, {@code bmm} and {@code matmul}, with their backward. */
final class LinalgOps {
    private LinalgOps() {
    }

    /** A matrix operand for GEMM: the tensor (made row- or column-major if needed), transposed flag and ld. */
    private record Operand(Tensor t, boolean trans, int ld) {
    }

    private static Operand operand(Tensor m) {
        int[] st = m.strides();
        int[] sh = m.shape();
        if (st[1] == 1 && st[0] >= Math.max(1, sh[1])) {
            return new Operand(m, false, st[0]);
        }
        if (st[0] == 1 && st[1] >= Math.max(1, sh[0])) {
            return new Operand(m, true, st[1]);
        }
        Tensor c = ViewOps.copyRaw(m, m.dtype());
        return new Operand(c, false, Math.max(1, sh[1]));
    }

    private static void checkFloat(String op, Tensor a, Tensor b) {
        if (a.dtype() != b.dtype()) {
            throw new IllegalArgumentException(op + ": expected both operands to have the same dtype, but got "
                    + a.dtype() + " and " + b.dtype());
        }
    }

    /** Raw C = A x B for 2-d operands (A is [m, k], B is [k, n]) into {@code out} at a batch offset. */
    static void gemm(Tensor a, Tensor b, Tensor out, long outOffset) {
        int m = a.size(0);
        int k = a.size(1);
        int n = b.size(1);
        Operand oa = operand(a);
        Operand ob = operand(b);
        if (out.dtype() == DType.FLOAT32) {
            Gemm.sgemm(oa.trans, ob.trans, m, n, k, 1f, oa.t.storage().segment(), oa.t.storageOffset(), oa.ld,
                    ob.t.storage().segment(), ob.t.storageOffset(), ob.ld, 0f, out.storage().segment(), outOffset,
                    Math.max(1, n));
        } else {
            Gemm.dgemm(oa.trans, ob.trans, m, n, k, 1.0, oa.t.storage().segment(), oa.t.storageOffset(), oa.ld,
                    ob.t.storage().segment(), ob.t.storageOffset(), ob.ld, 0.0, out.storage().segment(), outOffset,
                    Math.max(1, n));
        }
    }

    static Tensor mm(Tensor a, Tensor b) {
        if (a.dim() != 2 || b.dim() != 2) {
            throw new IllegalArgumentException("mm expects 2-d tensors, got shapes " + Shapes.str(a.shape()) + " and "
                    + Shapes.str(b.shape()));
        }
        checkFloat("mm", a, b);
        if (a.size(1) != b.size(0)) {
            throw new IllegalArgumentException("mat1 and mat2 shapes cannot be multiplied (" + a.size(0) + "x"
                    + a.size(1) + " and " + b.size(0) + "x" + b.size(1) + ")");
        }
        Tensor out = mmRaw(a, b);
        if (!Autograd.needsGrad(a, b)) {
            return out;
        }
        SavedTensor sa = b.requiresGrad() ? SavedTensor.save(a) : null;
        SavedTensor sb = a.requiresGrad() ? SavedTensor.save(b) : null;
        return Autograd.record("MmBackward0", out, g -> new Tensor[] {
            sb == null ? null : g[0].mm(sb.unpack().t()),
            sa == null ? null : sa.unpack().t().mm(g[0])}, a, b);
    }

    private static Tensor mmRaw(Tensor a, Tensor b) {
        if (DeviceOps.on(a) || DeviceOps.on(b)) {
            return DeviceOps.mm(a, b);
        }
        DType dt = a.dtype();
        if (dt.isFloatingPoint() && Ops.computeType(dt) == dt) {
            Tensor out = Tensor.uninitialized(dt, a.size(0), b.size(1));
            gemm(a, b, out, 0);
            return out;
        }
        // Integers (exact below 2^53) and float16/bfloat16 compute in float64 and convert back.
        Tensor r = mmRaw(ViewOps.copyRaw(a, DType.FLOAT64), ViewOps.copyRaw(b, DType.FLOAT64));
        return ViewOps.copyRaw(r, dt);
    }

    static Tensor bmm(Tensor a, Tensor b) {
        if (a.dim() != 3 || b.dim() != 3) {
            throw new IllegalArgumentException("bmm expects 3-d tensors, got shapes " + Shapes.str(a.shape())
                    + " and " + Shapes.str(b.shape()));
        }
        checkFloat("bmm", a, b);
        if (a.size(0) != b.size(0) || a.size(2) != b.size(1)) {
            throw new IllegalArgumentException("bmm: shapes " + Shapes.str(a.shape()) + " and "
                    + Shapes.str(b.shape()) + " do not match ([b, n, k] x [b, k, m] expected)");
        }
        int batch = a.size(0);
        DType dt = a.dtype();
        Tensor out;
        if (DeviceOps.on(a) || DeviceOps.on(b)) {
            out = DeviceOps.bmm(a, b);
        } else if (dt == DType.FLOAT32 || dt == DType.FLOAT64) {
            out = Tensor.uninitialized(dt, batch, a.size(1), b.size(2));
            long step = (long) a.size(1) * b.size(2);
            try (var ignored = Autograd.noGrad()) {
                for (int i = 0; i < batch; i++) {
                    gemm(a.select(0, i), b.select(0, i), out, i * step);
                }
            }
        } else {
            try (var ignored = Autograd.noGrad()) {
                out = bmm(a.to(DType.FLOAT64), b.to(DType.FLOAT64)).to(dt);
            }
        }
        if (!Autograd.needsGrad(a, b)) {
            return out;
        }
        SavedTensor sa = SavedTensor.save(a);
        SavedTensor sb = SavedTensor.save(b);
        return Autograd.record("BmmBackward0", out, g -> new Tensor[] {
            g[0].bmm(sb.unpack().transpose(1, 2)),
            sa.unpack().transpose(1, 2).bmm(g[0])}, a, b);
    }

    static Tensor matmul(Tensor a, Tensor b) {
        int da = a.dim();
        int db = b.dim();
        if (da == 0 || db == 0) {
            throw new IllegalArgumentException("matmul: both arguments need at least 1 dimension, got shapes "
                    + Shapes.str(a.shape()) + " and " + Shapes.str(b.shape()));
        }
        if (da == 1 && db == 1) {
            if (a.size(0) != b.size(0)) {
                throw new IllegalArgumentException("matmul: 1-d tensors of sizes " + a.size(0) + " and " + b.size(0)
                        + " differ");
            }
            return a.unsqueeze(0).mm(b.unsqueeze(1)).reshape();
        }
        if (da <= 2 && db <= 2) {
            Tensor x = da == 1 ? a.unsqueeze(0) : a;
            Tensor y = db == 1 ? b.unsqueeze(1) : b;
            Tensor r = x.mm(y);
            return da == 1 ? r.squeeze(0) : db == 1 ? r.squeeze(1) : r;
        }
        return batched(a, b);
    }

    private static Tensor batched(Tensor a, Tensor b) {
        Tensor x = a.dim() == 1 ? a.unsqueeze(0) : a;
        Tensor y = b.dim() == 1 ? b.unsqueeze(1) : b;
        int[] xs = x.shape();
        int[] ys = y.shape();
        int n = xs[xs.length - 2];
        int k = xs[xs.length - 1];
        int k2 = ys[ys.length - 2];
        int m = ys[ys.length - 1];
        if (k != k2) {
            throw new IllegalArgumentException("matmul: shapes " + Shapes.str(a.shape()) + " and "
                    + Shapes.str(b.shape()) + " cannot be multiplied (" + k + " vs " + k2 + ")");
        }
        int[] batch = Shapes.broadcast(Arrays.copyOf(xs, xs.length - 2), Arrays.copyOf(ys, ys.length - 2));
        int bn = Shapes.numel(batch);
        Tensor xb = x.expand(concat(batch, n, k)).reshape(bn, n, k);
        Tensor yb = y.expand(concat(batch, k, m)).reshape(bn, k, m);
        Tensor r = xb.bmm(yb).reshape(concat(batch, n, m));
        if (a.dim() == 1) {
            r = r.squeeze(-2);
        }
        if (b.dim() == 1) {
            r = r.squeeze(-1);
        }
        return r;
    }

    private static int[] concat(int[] batch, int p, int q) {
        int[] s = Arrays.copyOf(batch, batch.length + 2);
        s[batch.length] = p;
        s[batch.length + 1] = q;
        return s;
    }
}
