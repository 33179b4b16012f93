package io.tensorbus.tensor;

import io.tensorbus.autograd.Autograd;
import io.tensorbus.autograd.SavedTensor;
import io.tensorbus.spi.DType;
import io.tensorbus.tensor.impl.Elementwise;
import io.tensorbus.tensor.impl.Elementwise.Binary;
import io.tensorbus.tensor.impl.Elementwise.Unary;
import io.tensorbus.tensor.impl.Shapes;
import io.tensorbus.tensor.impl.Strided;
import java.util.Arrays;

/** Elementwise arithmetic with broadcasting and type promotion, in-place variants, and their backward. */
final class Ops {
    private Ops() {
    }

    static final Binary ADD = new Binary("add", (a, b) -> a + b, (a, b) -> a + b, (a, b) -> a + b);
    static final Binary SUB = new Binary("sub", (a, b) -> a - b, (a, b) -> a - b, (a, b) -> a - b);
    static final Binary MUL = new Binary("mul", (a, b) -> a * b, (a, b) -> a * b, (a, b) -> a * b);
    static final Binary DIV = new Binary("div", (a, b) -> a / b, (a, b) -> a / b, null);
    static final Binary POW = new Binary("pow", (a, b) -> (float) Math.pow(a, b), Math::pow, null);
    static final Binary EQ = new Binary("eq", null, (a, b) -> a == b ? 1 : 0, (a, b) -> a == b ? 1 : 0);
    static final Binary GT = new Binary("gt", null, (a, b) -> a > b ? 1 : 0, (a, b) -> a > b ? 1 : 0);
    static final Binary LT = new Binary("lt", null, (a, b) -> a < b ? 1 : 0, (a, b) -> a < b ? 1 : 0);

    /** The dtype arithmetic on {@code a} and {@code b} computes in (PyTorch's promotion lattice). */
    static DType promote(DType a, DType b) {
        DType x = computeType(a);
        DType y = computeType(b);
        if (x == DType.FLOAT64 || y == DType.FLOAT64) {
            return DType.FLOAT64;
        }
        if (x == DType.FLOAT32 || y == DType.FLOAT32) {
            return DType.FLOAT32;
        }
        if (x == DType.INT64 || y == DType.INT64) {
            return DType.INT64;
        }
        return x == DType.INT32 || y == DType.INT32 ? DType.INT32 : DType.BOOL;
    }

    /**
     * PyTorch's {@code result_type} for two tensors: a 0-d tensor does not promote a dimensioned tensor of
     * the same or a higher category (bool < integer < floating).
     */
    static DType promote(Tensor a, Tensor b) {
        if (a.dim() > 0 && b.dim() == 0 && category(b.dtype()) <= category(a.dtype())) {
            return computeType(a.dtype());
        }
        if (b.dim() > 0 && a.dim() == 0 && category(a.dtype()) <= category(b.dtype())) {
            return computeType(b.dtype());
        }
        return promote(a.dtype(), b.dtype());
    }

    private static int category(DType t) {
        return t.isFloatingPoint() ? 2 : t == DType.BOOL ? 0 : 1;
    }

    static DType computeType(DType t) {
        return t == DType.FLOAT16 || t == DType.BFLOAT16 ? DType.FLOAT32 : t;
    }

    private static DType floatType(DType t) {
        DType c = computeType(t);
        return c.isFloatingPoint() ? c : DType.FLOAT32;
    }

    private static DType scalarType(DType t, double v) {
        DType c = computeType(t);
        if (!c.isFloatingPoint() && v != Math.rint(v)) {
            return DType.FLOAT32;
        }
        return c == DType.BOOL ? DType.INT64 : c;
    }

    /** Strides that walk {@code t} as if expanded to {@code shape} (0 on broadcast dimensions). */
    static int[] broadcastStrides(Tensor t, int[] shape) {
        int[] ts = t.shape();
        int[] st = t.strides();
        int[] out = new int[shape.length];
        int lead = shape.length - ts.length;
        for (int i = lead; i < shape.length; i++) {
            out[i] = ts[i - lead] == 1 && shape[i] != 1 ? 0 : st[i - lead];
        }
        return out;
    }

    static Strided.View expandedView(Tensor t, int[] shape) {
        return new Strided.View(t.storage().segment(), t.dtype(), t.storageOffset(), broadcastStrides(t, shape));
    }

    /** Raw (unrecorded) {@code op(a, b)} computed in {@code ct}, written as {@code outType}. */
    static Tensor binaryRaw(Binary op, Tensor a, Tensor b, DType ct, DType outType) {
        Tensor a2 = a.dtype() == ct ? a : ViewOps.copyRaw(a, ct);
        Tensor b2 = b.dtype() == ct ? b : ViewOps.copyRaw(b, ct);
        int[] shape = Shapes.broadcast(a2.shape(), b2.shape());
        Tensor out = Tensor.empty(outType, shape);
        boolean contiguous = a2.isContiguous() && b2.isContiguous()
                && Arrays.equals(a2.shape(), shape) && Arrays.equals(b2.shape(), shape);
        Elementwise.binary(op, expandedView(a2, shape), expandedView(b2, shape), out.view(), shape, contiguous);
        return out;
    }

    /** Raw (unrecorded) {@code op(a)} in {@code ct}. */
    static Tensor unaryRaw(Unary op, Tensor a, DType ct) {
        Tensor a2 = a.dtype() == ct ? a : ViewOps.copyRaw(a, ct);
        Tensor out = Tensor.empty(ct, a2.shape());
        Elementwise.unary(op, a2.view(), out.view(), a2.shape(), a2.isContiguous());
        return out;
    }

    static Tensor add(Tensor a, Tensor b, double alpha) {
        DType ct = promote(a, b);
        if (ct == DType.BOOL) {
            ct = DType.INT64;
        }
        Tensor out;
        if (alpha == 1.0) {
            out = binaryRaw(ADD, a, b, ct, ct);
        } else if (alpha == -1.0) {
            out = binaryRaw(SUB, a, b, ct, ct);
        } else {
            out = binaryRaw(ADD, a, mulScalarRaw(b, alpha, ct), ct, ct);
        }
        String name = alpha == -1.0 ? "SubBackward0" : "AddBackward0";
        return Autograd.record(name, out, g -> new Tensor[] {g[0], alpha == 1.0 ? g[0] : g[0].mul(alpha)}, a, b);
    }

    static Tensor addScalar(Tensor a, double v) {
        DType ct = scalarType(a.dtype(), v);
        Tensor out = binaryRaw(ADD, a, Tensor.scalar(v, ct), ct, ct);
        return Autograd.record("AddBackward1", out, g -> new Tensor[] {g[0]}, a);
    }

    private static Tensor mulScalarRaw(Tensor a, double v, DType ct) {
        return binaryRaw(MUL, a, Tensor.scalar(v, ct), ct, ct);
    }

    static Tensor mul(Tensor a, Tensor b) {
        DType ct = promote(a, b);
        Tensor out = binaryRaw(MUL, a, b, ct, ct == DType.BOOL ? DType.BOOL : ct);
        if (!Autograd.needsGrad(a, b)) {
            return out;
        }
        SavedTensor sa = b.requiresGrad() ? SavedTensor.save(a) : null;
        SavedTensor sb = a.requiresGrad() ? SavedTensor.save(b) : null;
        return Autograd.record("MulBackward0", out, g -> new Tensor[] {
            sb == null ? null : g[0].mul(sb.unpack()),
            sa == null ? null : g[0].mul(sa.unpack())}, a, b);
    }

    static Tensor mulScalar(Tensor a, double v) {
        DType ct = scalarType(a.dtype(), v);
        Tensor out = mulScalarRaw(a, v, ct);
        return Autograd.record(v == -1.0 ? "NegBackward0" : "MulBackward1", out, g -> new Tensor[] {g[0].mul(v)}, a);
    }

    static Tensor div(Tensor a, Tensor b) {
        DType ct = floatType(promote(a, b));
        Tensor out = binaryRaw(DIV, a, b, ct, ct);
        if (!Autograd.needsGrad(a, b)) {
            return out;
        }
        SavedTensor sa = SavedTensor.save(a);
        SavedTensor sb = SavedTensor.save(b);
        return Autograd.record("DivBackward0", out, g -> {
            Tensor bb = sb.unpack();
            Tensor ga = g[0].div(bb);
            Tensor gb = b.requiresGrad() ? g[0].mul(sa.unpack()).div(bb.mul(bb)).neg() : null;
            return new Tensor[] {ga, gb};
        }, a, b);
    }

    static Tensor divScalar(Tensor a, double v) {
        DType ct = floatType(a.dtype());
        Tensor out = binaryRaw(DIV, a, Tensor.scalar(v, ct), ct, ct);
        return Autograd.record("DivBackward1", out, g -> new Tensor[] {g[0].div(v)}, a);
    }

    static Tensor compare(Tensor a, Tensor b, String op) {
        DType ct = promote(a, b);
        Binary k = switch (op) {
            case "eq" -> EQ;
            case "gt" -> GT;
            default -> LT;
        };
        DType work = ct.isFloatingPoint() ? DType.FLOAT64 : DType.INT64;
        return binaryRaw(k, a, b, work, DType.BOOL);
    }

    // ------------------------------------------------------------ unary ops

    static Tensor map(Tensor a, String name, Elementwise.F1 f, Elementwise.D1 d) {
        return unaryRaw(new Unary(name, f, d, null), a, floatType(a.dtype()));
    }

    static Tensor exp(Tensor a) {
        Tensor out = map(a, "exp", x -> (float) Math.exp(x), Math::exp);
        SavedTensor r = Autograd.needsGrad(a) ? SavedTensor.save(out) : null;
        return Autograd.record("ExpBackward0", out, g -> new Tensor[] {g[0].mul(r.unpack())}, a);
    }

    static Tensor log(Tensor a) {
        Tensor out = map(a, "log", x -> (float) Math.log(x), Math::log);
        SavedTensor s = Autograd.needsGrad(a) ? SavedTensor.save(a) : null;
        return Autograd.record("LogBackward0", out, g -> new Tensor[] {g[0].div(s.unpack())}, a);
    }

    static Tensor sqrt(Tensor a) {
        Tensor out = map(a, "sqrt", x -> (float) Math.sqrt(x), Math::sqrt);
        SavedTensor r = Autograd.needsGrad(a) ? SavedTensor.save(out) : null;
        return Autograd.record("SqrtBackward0", out, g -> new Tensor[] {g[0].div(r.unpack().mul(2.0))}, a);
    }

    static Tensor abs(Tensor a) {
        Tensor out = a.dtype().isFloatingPoint() ? map(a, "abs", Math::abs, Math::abs)
                : unaryRaw(new Unary("abs", null, null, Math::abs), a, computeType(a.dtype()));
        SavedTensor s = Autograd.needsGrad(a) ? SavedTensor.save(a) : null;
        return Autograd.record("AbsBackward0", out,
                g -> new Tensor[] {g[0].mul(map(s.unpack(), "sign", Math::signum, Math::signum))}, a);
    }

    static Tensor powScalar(Tensor a, double e) {
        Tensor out = map(a, "pow", x -> (float) Math.pow(x, e), x -> Math.pow(x, e));
        SavedTensor s = Autograd.needsGrad(a) ? SavedTensor.save(a) : null;
        return Autograd.record("PowBackward0", out, g -> new Tensor[] {
            e == 0 ? Tensor.zerosLike(g[0]) : g[0].mul(s.unpack().pow(e - 1).mul(e))}, a);
    }

    static Tensor pow(Tensor a, Tensor b) {
        DType ct = floatType(promote(a, b));
        Tensor out = binaryRaw(POW, a, b, ct, ct);
        if (!Autograd.needsGrad(a, b)) {
            return out;
        }
        SavedTensor sa = SavedTensor.save(a);
        SavedTensor sb = SavedTensor.save(b);
        SavedTensor sr = SavedTensor.save(out);
        return Autograd.record("PowBackward1", out, g -> {
            Tensor x = sa.unpack();
            Tensor e = sb.unpack();
            // e * x^(e-1), defined as 0 where e == 0 (so 0^0 does not give 0 * inf).
            Tensor dx = binaryRaw(new Binary("powGrad", null, (u, v) -> v == 0 ? 0 : v * Math.pow(u, v - 1), null),
                    x, e, DType.FLOAT64, DType.FLOAT64).to(ct);
            Tensor ga = g[0].mul(dx);
            // d/de x^e = x^e log x, defined as 0 where x == 0 and e >= 0 (as PyTorch).
            Tensor logx = binaryRaw(new Binary("xlog", null, (u, v) -> u == 0 && v >= 0 ? 0 : Math.log(u), null),
                    x, e, DType.FLOAT64, DType.FLOAT64).to(ct);
            Tensor gb = g[0].mul(sr.unpack()).mul(logx);
            return new Tensor[] {ga, gb};
        }, a, b);
    }

    static Tensor clamp(Tensor a, double min, double max) {
        if (min > max) {
            throw new IllegalArgumentException("clamp: min " + min + " is greater than max " + max);
        }
        Tensor out = map(a, "clamp", x -> (float) Math.min(Math.max(x, min), max), x -> Math.min(Math.max(x, min), max));
        SavedTensor s = Autograd.needsGrad(a) ? SavedTensor.save(a) : null;
        return Autograd.record("ClampBackward1", out, g -> new Tensor[] {g[0].mul(
                map(s.unpack(), "clampMask", x -> x >= min && x <= max ? 1f : 0f, x -> x >= min && x <= max ? 1 : 0))},
                a);
    }

    static Tensor relu(Tensor a) {
        // Written as !(x <= 0) so that NaN passes through, as in PyTorch.
        Tensor out = map(a, "relu", x -> !(x <= 0) ? x : 0f, x -> !(x <= 0) ? x : 0.0);
        SavedTensor r = Autograd.needsGrad(a) ? SavedTensor.save(out) : null;
        return Autograd.record("ReluBackward0", out, g -> new Tensor[] {g[0].mul(
                map(r.unpack(), "reluMask", x -> !(x <= 0) ? 1f : 0f, x -> !(x <= 0) ? 1 : 0))}, a);
    }

    static Tensor sigmoid(Tensor a) {
        Tensor out = map(a, "sigmoid", x -> (float) (1.0 / (1.0 + Math.exp(-x))), x -> 1.0 / (1.0 + Math.exp(-x)));
        SavedTensor r = Autograd.needsGrad(a) ? SavedTensor.save(out) : null;
        return Autograd.record("SigmoidBackward0", out, g -> {
            Tensor y = r.unpack();
            return new Tensor[] {g[0].mul(y.mul(y.neg().add(1.0)))};
        }, a);
    }

    static Tensor tanh(Tensor a) {
        Tensor out = map(a, "tanh", x -> (float) Math.tanh(x), Math::tanh);
        SavedTensor r = Autograd.needsGrad(a) ? SavedTensor.save(out) : null;
        return Autograd.record("TanhBackward0", out, g -> {
            Tensor y = r.unpack();
            return new Tensor[] {g[0].mul(y.mul(y).neg().add(1.0))};
        }, a);
    }

    // ------------------------------------------------------------ in place

    static void fill(Tensor t, double v) {
        Tensor src = Tensor.empty(t.dtype());
        io.tensorbus.tensor.impl.Access.setDouble(src.storage().segment(), t.dtype(), 0, v);
        Strided.copy(expandedView(src, t.shape()), t.view(), t.shape());
    }

    private static void checkWritable(Tensor self, Tensor other, String op) {
        int[] shape = Shapes.broadcast(self.shape(), other.shape());
        if (!Arrays.equals(shape, self.shape())) {
            throw new IllegalArgumentException(op + "i: output with shape " + Shapes.str(self.shape())
                    + " doesn't match the broadcast shape " + Shapes.str(shape));
        }
        int[] st = self.strides();
        int[] sh = self.shape();
        for (int i = 0; i < st.length; i++) {
            if (st[i] == 0 && sh[i] > 1) {
                throw new IllegalArgumentException(op + "i: more than one element of the written-to tensor refers"
                        + " to a single memory location (an expanded tensor); clone() it first");
            }
        }
        DType result = promote(self, other);
        if (result.isFloatingPoint() && !self.dtype().isFloatingPoint()) {
            throw new IllegalArgumentException(op + "i: result type " + result + " can't be cast to the desired"
                    + " output type " + self.dtype());
        }
    }

    /** {@code self op= other} for op in add (with alpha), mul, div. */
    static Tensor inplace(Tensor self, Tensor other, double alpha, String op) {
        self.checkInplace(op + "i");
        checkWritable(self, other, op);
        if (op.equals("div") && !self.dtype().isFloatingPoint()) {
            throw new IllegalArgumentException("divi: result type float32 can't be cast to the desired output type "
                    + self.dtype() + "; use div() for true division");
        }
        if (Autograd.needsGrad(self, other)) {
            Tensor result = switch (op) {
                case "add" -> add(snapshot(self), other, alpha);
                case "mul" -> mul(snapshot(self), other);
                default -> div(snapshot(self), other);
            };
            return writeResult(self, result);
        }
        DType ct = computeType(self.dtype());
        Tensor b = other.dtype() == ct ? other : ViewOps.copyRaw(other, ct);
        if (op.equals("add") && alpha != 1.0) {
            b = mulScalarRaw(b, alpha, ct);
        }
        Binary k = switch (op) {
            case "add" -> ADD;
            case "mul" -> MUL;
            default -> DIV;
        };
        applyInPlace(self, k, b);
        return self;
    }

    static Tensor inplaceScalar(Tensor self, double v, String op) {
        return inplace(self, Tensor.scalar(v, self.dtype().isFloatingPoint() ? computeType(self.dtype())
                : scalarType(self.dtype(), v)), 1.0, op);
    }

    private static void applyInPlace(Tensor self, Binary k, Tensor b) {
        int[] shape = self.shape();
        if (computeType(self.dtype()) == self.dtype()) {
            boolean contiguous = self.isContiguous() && b.isContiguous() && Arrays.equals(b.shape(), shape);
            Elementwise.binary(k, self.view(), expandedView(b, shape), self.view(), shape, contiguous);
        } else {
            Tensor r = binaryRaw(k, self, b, computeType(self.dtype()), computeType(self.dtype()));
            Strided.copy(r.view(), self.view(), shape);
        }
        self.storage().bumpVersion();
    }

    /** A copy of {@code self}'s values that carries its history, so backward sees the values before the write. */
    private static Tensor snapshot(Tensor self) {
        Tensor copy = ViewOps.copyRaw(self, self.dtype());
        if (self.gradFn() != null) {
            copy.setGradFn(self.gradFn(), self.outputNr());
        }
        return copy;
    }

    private static Tensor writeResult(Tensor self, Tensor result) {
        Strided.copy(result.view(), self.view(), self.shape());
        self.storage().bumpVersion();
        if (result.gradFn() != null) {
            self.setGradFn(result.gradFn(), result.outputNr());
        }
        return self;
    }

    static Tensor copyi(Tensor self, Tensor src) {
        self.checkInplace("copyi");
        checkWritableShape(self, src);
        if (Autograd.needsGrad(self, src)) {
            // The old value of self gets a zero gradient (it was overwritten), src gets the incoming one.
            Tensor history = self.detach();
            if (self.gradFn() != null) {
                history.setGradFn(self.gradFn(), self.outputNr());
            }
            Tensor value = ViewOps.copyRaw(src.detach().expand(self.shape()), self.dtype());
            Tensor r = Autograd.record("CopyBackwards", value,
                    g -> new Tensor[] {Tensor.zerosLike(g[0]), g[0]}, history, src);
            return writeResult(self, r);
        }
        Strided.copy(expandedView(src, self.shape()), self.view(), self.shape());
        self.storage().bumpVersion();
        return self;
    }

    private static void checkWritableShape(Tensor self, Tensor src) {
        int[] shape = Shapes.broadcast(self.shape(), src.shape());
        if (!Arrays.equals(shape, self.shape())) {
            throw new IllegalArgumentException("copyi: source of shape " + Shapes.str(src.shape())
                    + " cannot be broadcast to the destination's shape " + Shapes.str(self.shape()));
        }
    }
}
