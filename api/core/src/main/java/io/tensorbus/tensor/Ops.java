package io.tensorbus.tensor;

import io.tensorbus.DType;
import io.tensorbus.autograd.Autograd;
import io.tensorbus.autograd.SavedTensor;
import io.tensorbus.internal.tensor.Access;
import io.tensorbus.internal.tensor.Elementwise.Binary;
import io.tensorbus.internal.tensor.Elementwise.Unary;
import io.tensorbus.internal.tensor.Elementwise;
import io.tensorbus.internal.tensor.FloatKernels;
import io.tensorbus.internal.tensor.Shapes;
import io.tensorbus.internal.tensor.Strided;
import java.lang.foreign.MemorySegment;
import java.util.Arrays;
import java.util.function.DoubleUnaryOperator;

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
    /** relu's backward in one pass: the gradient where the output is positive or NaN, else 0. */
    static final Binary RELU_GRAD = new Binary(Elementwise.RELU_GRAD, (g, y) -> y <= 0 ? 0f : g,
            (g, y) -> y <= 0 ? 0 : g, (g, y) -> y <= 0 ? 0 : g);

    /**
     * PyTorch's result type of arithmetic on two dtypes: floating beats integer beats bool, wider beats
     * narrower, and float16 with bfloat16 gives float32.
     */
    static DType promote(DType a, DType b) {
        if (a == b) {
            return a;
        }
        boolean fa = a.isFloatingPoint();
        boolean fb = b.isFloatingPoint();
        if (fa && fb) {
            return a == DType.FLOAT64 || b == DType.FLOAT64 ? DType.FLOAT64 : DType.FLOAT32;
        }
        if (fa || fb) {
            return fa ? a : b;
        }
        if (a == DType.INT64 || b == DType.INT64) {
            return DType.INT64;
        }
        return a == DType.INT32 || b == DType.INT32 ? DType.INT32 : DType.BOOL;
    }

    /**
     * PyTorch's {@code result_type} for two tensors: a 0-d tensor does not promote a dimensioned tensor of
     * the same or a higher category (bool < integer < floating).
     */
    static DType promote(Tensor a, Tensor b) {
        if (a.dim() > 0 && b.dim() == 0 && category(b.dtype()) <= category(a.dtype())) {
            return a.dtype();
        }
        if (b.dim() > 0 && a.dim() == 0 && category(a.dtype()) <= category(b.dtype())) {
            return b.dtype();
        }
        return promote(a.dtype(), b.dtype());
    }

    private static int category(DType t) {
        return t.isFloatingPoint() ? 2 : t == DType.BOOL ? 0 : 1;
    }

    /** The dtype kernels compute a result type in: float16 and bfloat16 compute in float32. */
    static DType computeType(DType t) {
        return t == DType.FLOAT16 || t == DType.BFLOAT16 ? DType.FLOAT32 : t;
    }

    static DType floatResult(DType t) {
        return t.isFloatingPoint() ? t : DType.FLOAT32;
    }

    /** The result type of {@code tensor op scalar}: a fractional scalar makes integers float32, bool counts. */
    static DType scalarResult(DType t, double v) {
        if (!t.isFloatingPoint() && v != Math.rint(v)) {
            return DType.FLOAT32;
        }
        return t == DType.BOOL ? DType.INT64 : t;
    }

    private static boolean isHalf(DType t) {
        return computeType(t) != t;
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

    /**
     * Raw (unrecorded) {@code op(a, b)} computed in {@code ct}, returned as {@code outType} (bool for
     * comparisons; float16/bfloat16 results are computed in float32 and narrowed).
     */
    static Tensor binaryRaw(Binary op, Tensor a, Tensor b, DType ct, DType outType) {
        if (DeviceOps.on(a) || DeviceOps.on(b)) {
            return DeviceOps.binary(op.name(), a, b, ct, outType);
        }
        Tensor a2 = a.dtype() == ct ? a : ViewOps.copyRaw(a, ct);
        Tensor b2 = b.dtype() == ct ? b : ViewOps.copyRaw(b, ct);
        int[] shape = Shapes.broadcast(a2.shape(), b2.shape());
        Tensor out = Tensor.uninitialized(isHalf(outType) ? ct : outType, shape);
        boolean contiguous = a2.isContiguous() && b2.isContiguous()
                && Arrays.equals(a2.shape(), shape) && Arrays.equals(b2.shape(), shape);
        Elementwise.binary(op, expandedView(a2, shape), expandedView(b2, shape), out.view(), shape, contiguous);
        return out.dtype() == outType ? out : ViewOps.copyRaw(out, outType);
    }

    /** Raw {@code op(a, b)} with the result type {@code rt} (computed in its compute type). */
    private static Tensor arith(Binary op, Tensor a, Tensor b, DType rt) {
        return binaryRaw(op, a, b, computeType(rt), rt);
    }

    /** Raw (unrecorded) {@code op(a)} with result type {@code rt}. */
    static Tensor unaryRaw(Unary op, Tensor a, DType rt) {
        if (DeviceOps.on(a)) {
            return DeviceOps.unary(op.name(), a, rt, Double.NaN, Double.NaN);
        }
        DType ct = computeType(rt);
        Tensor a2 = a.dtype() == ct ? a : ViewOps.copyRaw(a, ct);
        Tensor out = Tensor.uninitialized(ct, a2.shape());
        Elementwise.unary(op, a2.view(), out.view(), a2.shape(), a2.isContiguous());
        return ct == rt ? out : ViewOps.copyRaw(out, rt);
    }

    static Tensor add(Tensor a, Tensor b, double alpha) {
        DType rt = promote(a, b);
        if (!rt.isFloatingPoint() && alpha != Math.rint(alpha)) {
            throw new IllegalArgumentException("for integral input tensors (" + rt + "), argument alpha must not be a"
                    + " floating point number, got " + alpha);
        }
        if (rt == DType.BOOL && alpha == -1.0) {
            throw new IllegalArgumentException("subtraction with two bool tensors is not supported; use logical ops");
        }
        Tensor out;
        if (alpha == 1.0) {
            out = arith(ADD, a, b, rt);
        } else if (alpha == -1.0) {
            out = arith(SUB, a, b, rt);
        } else {
            out = arith(ADD, a, arith(MUL, b, Tensor.scalar(alpha, computeType(rt)), computeType(rt)), rt);
        }
        String name = alpha == -1.0 ? "SubBackward0" : "AddBackward0";
        return Autograd.record(name, out, g -> new Tensor[] {g[0], alpha == 1.0 ? g[0] : g[0].mul(alpha)}, a, b);
    }

    static Tensor addScalar(Tensor a, double v) {
        DType rt = scalarResult(a.dtype(), v);
        Tensor out = arith(ADD, a, Tensor.scalar(v, computeType(rt)), rt);
        return Autograd.record("AddBackward1", out, g -> new Tensor[] {g[0]}, a);
    }

    static Tensor mul(Tensor a, Tensor b) {
        Tensor out = arith(MUL, a, b, promote(a, b));
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
        DType rt = scalarResult(a.dtype(), v);
        Tensor out = arith(MUL, a, Tensor.scalar(v, computeType(rt)), rt);
        return Autograd.record(v == -1.0 ? "NegBackward0" : "MulBackward1", out, g -> new Tensor[] {g[0].mul(v)}, a);
    }

    static Tensor div(Tensor a, Tensor b) {
        Tensor out = arith(DIV, a, b, floatResult(promote(a, b)));
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
        DType rt = floatResult(a.dtype());
        Tensor out = arith(DIV, a, Tensor.scalar(v, computeType(rt)), rt);
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
        return map(a, name, f, d, null);
    }

    static Tensor map(Tensor a, String name, Elementwise.F1 f, Elementwise.D1 d, FloatKernels.Loop vector) {
        return unaryRaw(new Unary(name, f, d, null, vector), a, floatResult(a.dtype()));
    }

    /**
     * A function of the transcendental kind: {@code fast} (and the {@code vector} loop, when given) by default;
     * under {@link Determinism} {@code strict} (StrictMath), one element at a time. The Vector API's EXP, LOG
     * and TANH and the JIT's math intrinsics may round differently in interpreted and compiled code, so their
     * bits depend on how far the JIT got; StrictMath's are the same everywhere.
     */
    private static Tensor transcendental(Tensor a, String name, DoubleUnaryOperator fast,
            DoubleUnaryOperator strict, FloatKernels.Loop vector) {
        if (Determinism.areDeterministicAlgorithmsEnabled()) {
            return map(a, name, x -> (float) strict.applyAsDouble(x), strict::applyAsDouble);
        }
        return map(a, name, x -> (float) fast.applyAsDouble(x), fast::applyAsDouble, vector);
    }

    static Tensor exp(Tensor a) {
        Tensor out = transcendental(a, "exp", Math::exp, StrictMath::exp, FloatKernels::exp);
        SavedTensor r = Autograd.needsGrad(a) ? SavedTensor.save(out) : null;
        return Autograd.record("ExpBackward0", out, g -> new Tensor[] {g[0].mul(r.unpack())}, a);
    }

    static Tensor log(Tensor a) {
        Tensor out = transcendental(a, "log", Math::log, StrictMath::log, FloatKernels::log);
        SavedTensor s = Autograd.needsGrad(a) ? SavedTensor.save(a) : null;
        return Autograd.record("LogBackward0", out, g -> new Tensor[] {g[0].div(s.unpack())}, a);
    }

    static Tensor sqrt(Tensor a) {
        Tensor out = map(a, "sqrt", x -> (float) Math.sqrt(x), Math::sqrt, FloatKernels::sqrt);
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
        Tensor out = DeviceOps.on(a) ? DeviceOps.unary("pow", a, floatResult(a.dtype()), e, 0)
                : transcendental(a, "pow", x -> Math.pow(x, e), x -> StrictMath.pow(x, e), null);
        SavedTensor s = Autograd.needsGrad(a) ? SavedTensor.save(a) : null;
        return Autograd.record("PowBackward0", out, g -> new Tensor[] {
            e == 0 ? Tensor.zerosLike(g[0]) : g[0].mul(s.unpack().pow(e - 1).mul(e))}, a);
    }

    static Tensor pow(Tensor a, Tensor b) {
        DType ct = floatResult(promote(a, b));
        Tensor out = arith(POW, a, b, ct);
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
        Tensor out = DeviceOps.on(a) ? DeviceOps.unary("clamp", a, floatResult(a.dtype()), min, max)
                : !a.dtype().isFloatingPoint() && isWhole(min) && isWhole(max)
                ? unaryRaw(new Unary("clamp", null, null, x -> (long) Math.min(Math.max(x, min), max)), a, a.dtype())
                : map(a, "clamp", x -> (float) Math.min(Math.max(x, min), max), x -> Math.min(Math.max(x, min), max));
        SavedTensor s = Autograd.needsGrad(a) ? SavedTensor.save(a) : null;
        return Autograd.record("ClampBackward1", out, g -> new Tensor[] {g[0].mul(clampMask(s.unpack(), min, max))},
                a);
    }

    /** 1 where {@code min <= x <= max}, else 0. */
    private static Tensor clampMask(Tensor x, double min, double max) {
        return DeviceOps.on(x) ? DeviceOps.unary("clampMask", x, floatResult(x.dtype()), min, max)
                : map(x, "clampMask", v -> v >= min && v <= max ? 1f : 0f, v -> v >= min && v <= max ? 1 : 0);
    }

    /** An integral value or an infinity (a one-sided bound). */
    private static boolean isWhole(double v) {
        return v == Math.rint(v) || Double.isInfinite(v);
    }

    static Tensor relu(Tensor a) {
        // Written as !(x <= 0) so that NaN passes through, as in PyTorch.
        Tensor out = map(a, "relu", x -> !(x <= 0) ? x : 0f, x -> !(x <= 0) ? x : 0.0, FloatKernels::relu);
        SavedTensor r = Autograd.needsGrad(a) ? SavedTensor.save(out) : null;
        // threshold_backward as PyTorch has it: a select, so a NaN gradient where the output is 0 gives 0.
        return Autograd.record("ReluBackward0", out, g -> {
            Tensor y = r.unpack();
            return new Tensor[] {arith(RELU_GRAD, g[0], y, promote(g[0], y))};
        }, a);
    }

    static Tensor sigmoid(Tensor a) {
        Tensor out = transcendental(a, "sigmoid", x -> 1.0 / (1.0 + Math.exp(-x)),
                x -> 1.0 / (1.0 + StrictMath.exp(-x)), null);
        SavedTensor r = Autograd.needsGrad(a) ? SavedTensor.save(out) : null;
        return Autograd.record("SigmoidBackward0", out, g -> {
            Tensor y = r.unpack();
            return new Tensor[] {g[0].mul(y.mul(y.neg().add(1.0)))};
        }, a);
    }

    static Tensor tanh(Tensor a) {
        Tensor out = transcendental(a, "tanh", Math::tanh, StrictMath::tanh, FloatKernels::tanh);
        SavedTensor r = Autograd.needsGrad(a) ? SavedTensor.save(out) : null;
        return Autograd.record("TanhBackward0", out, g -> {
            Tensor y = r.unpack();
            return new Tensor[] {g[0].mul(y.mul(y).neg().add(1.0))};
        }, a);
    }

    // ------------------------------------------------------------ in place

    /** {@code self.filli(v)}: recorded (a zero gradient for the overwritten value) when self is in a graph. */
    static Tensor filli(Tensor self, double v) {
        AutogradMeta.checkInplace(self, "filli");
        boolean inGraph = self.requiresGrad() || (self.base() != null && self.base().requiresGrad());
        if (Autograd.isGradEnabled() && inGraph) {
            Tensor history = self.detach();
            if (self.gradFn() != null) {
                AutogradMeta.setGradFn(history, self.gradFn(), self.outputNr());
            }
            Tensor value = Tensor.full(v, self.dtype(), self.shape());
            return writeResult(self, Autograd.record("FillBackward0", value,
                    g -> new Tensor[] {Tensor.zerosLike(g[0])}, history));
        }
        fill(self, v);
        self.storage().bumpVersion();
        return self;
    }

    static void fill(Tensor t, double v) {
        if (t.isContiguous() && t.numel() > 0) {
            fillContiguous(t, v);
            return;
        }
        Tensor src = Tensor.empty(t.dtype());
        Access.setDouble(src.storage().segment(), t.dtype(), 0, v);
        Strided.copy(expandedView(src, t.shape()), t.view(), t.shape());
    }

    /**
     * Writes {@code v} once, then doubles the written run with bulk copies: log2(n) copies at copy speed, where the
     * strided path wrote element by element (a 64 MiB {@code ones} took 20 ms, six times a copy).
     */
    private static void fillContiguous(Tensor t, double v) {
        long es = t.dtype().byteSize();
        long bytes = t.numel() * es;
        MemorySegment seg = t.storage().segment().asSlice(t.storageOffset() * es, bytes);
        Access.setDouble(seg, t.dtype(), 0, v);
        for (long done = es; done < bytes; done *= 2) {
            MemorySegment.copy(seg, 0, seg, done, Math.min(done, bytes - done));
        }
    }

    private static void checkWritable(Tensor self, Tensor other, String op) {
        int[] shape = Shapes.broadcast(self.shape(), other.shape());
        if (!Arrays.equals(shape, self.shape())) {
            throw new IllegalArgumentException(op + "i: output with shape " + Shapes.str(self.shape())
                    + " doesn't match the broadcast shape " + Shapes.str(shape));
        }
        checkNoInternalOverlap(self, op + "i");
        checkNoPartialOverlap(self, other, op + "i");
        DType result = promote(self, other);
        if (result.isFloatingPoint() && !self.dtype().isFloatingPoint()) {
            throw new IllegalArgumentException(op + "i: result type " + result + " can't be cast to the desired"
                    + " output type " + self.dtype());
        }
    }

    private static void checkNoInternalOverlap(Tensor self, String op) {
        int[] st = self.strides();
        int[] sh = self.shape();
        for (int i = 0; i < st.length; i++) {
            if (st[i] == 0 && sh[i] > 1) {
                throw new IllegalArgumentException(op + ": more than one element of the written-to tensor refers"
                        + " to a single memory location (an expanded tensor); clone() it first");
            }
        }
    }

    /**
     * Refuses an input that shares memory with the written-to tensor in a different layout (such as
     * {@code x.addi(x.t())}), which an elementwise in-place kernel would read after overwriting.
     */
    private static void checkNoPartialOverlap(Tensor self, Tensor other, String op) {
        if (other.storage() != self.storage()) {
            return;
        }
        boolean same = other.storageOffset() == self.storageOffset() && Arrays.equals(other.shape(), self.shape())
                && Arrays.equals(other.strides(), self.strides());
        // As PyTorch: only two dense layouts can be compared by their memory ranges; interleaved views
        // (m[:, 0] and m[:, 1]) share a range without sharing an element.
        boolean comparable = isDense(self) && isDense(other);
        boolean disjoint = self.numel() == 0 || other.numel() == 0 || lastElement(self) < other.storageOffset()
                || lastElement(other) < self.storageOffset();
        if (!same && comparable && !disjoint) {
            throw new IllegalArgumentException(op + ": some elements of the input tensor and the written-to tensor"
                    + " refer to a single memory location; clone() the input first");
        }
    }

    /** True when the elements fill a gap-free range, in some order of the dimensions (PyTorch's dense). */
    private static boolean isDense(Tensor t) {
        int[] sh = t.shape();
        int[] st = t.strides();
        Integer[] order = new Integer[sh.length];
        for (int i = 0; i < order.length; i++) {
            order[i] = i;
        }
        Arrays.sort(order, (x, y) -> Integer.compare(st[x], st[y]));
        long expected = 1;
        for (int d : order) {
            if (sh[d] == 1) {
                continue;
            }
            if (st[d] != expected) {
                return false;
            }
            expected *= sh[d];
        }
        return true;
    }

    /** The storage index of a non-empty tensor's last element (strides are never negative). */
    private static long lastElement(Tensor t) {
        long last = t.storageOffset();
        int[] sh = t.shape();
        int[] st = t.strides();
        for (int i = 0; i < sh.length; i++) {
            last += (long) (sh[i] - 1) * st[i];
        }
        return last;
    }

    /** {@code self op= other} for op in add (with alpha), mul, div. */
    static Tensor inplace(Tensor self, Tensor other, double alpha, String op) {
        AutogradMeta.checkInplace(self, op + "i");
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
        if (op.equals("add") && alpha != 1.0 && addScaledInPlace(self, other, alpha)) {
            return self;
        }
        Tensor b = other.dtype() == ct ? other : ViewOps.copyRaw(other, ct);
        if (op.equals("add") && alpha != 1.0) {
            if (!ct.isFloatingPoint() && alpha != Math.rint(alpha)) {
                throw new IllegalArgumentException("addi: for integral tensors (" + ct + "), alpha must not be a "
                        + "floating point number, got " + alpha);
            }
            b = arith(MUL, b, Tensor.scalar(alpha, ct), ct);
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
        DType rt = self.dtype().isFloatingPoint() ? computeType(self.dtype()) : scalarResult(self.dtype(), v);
        return inplace(self, Tensor.scalar(v, rt), 1.0, op);
    }

    /**
     * {@code self += alpha * other} for float32 tensors of one shape, both contiguous, in one pass without a
     * temporary (every optimizer's update); false when the tensors are not of that kind. Partial overlap was
     * refused before (checkWritable), so each element is read before it is written.
     */
    private static boolean addScaledInPlace(Tensor self, Tensor other, double alpha) {
        if (self.dtype() != DType.FLOAT32 || other.dtype() != DType.FLOAT32 || !self.isContiguous()
                || !other.isContiguous() || !Arrays.equals(self.shape(), other.shape())) {
            return false;
        }
        Strided.View a = self.view();
        Strided.View b = other.view();
        float s = (float) alpha;
        Threads.parallelFor(0, Math.toIntExact(self.numel()), 1 << 15, (start, end) -> FloatKernels.addScaled(
                a.segment(), a.offset() + start, b.segment(), b.offset() + start, s, a.segment(), a.offset() + start,
                end - start));
        return true;
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
            AutogradMeta.setGradFn(copy, self.gradFn(), self.outputNr());
        }
        return copy;
    }

    /**
     * Writes a recorded op's result into {@code self} and moves the history over: onto {@code self} for a
     * base tensor, onto its base (through {@link ViewHistory#writeThroughView}) for a view.
     */
    private static Tensor writeResult(Tensor self, Tensor result) {
        if (self.base() != null) {
            return ViewHistory.writeThroughView(self, result);
        }
        Strided.copy(result.view(), self.view(), self.shape());
        self.storage().bumpVersion();
        if (result.gradFn() != null) {
            AutogradMeta.setGradFn(self, result.gradFn(), result.outputNr());
        }
        AutogradMeta.bumpHistory(self);
        return self;
    }

    static Tensor copyi(Tensor self, Tensor src) {
        AutogradMeta.checkInplace(self, "copyi");
        checkWritableShape(self, src);
        checkNoInternalOverlap(self, "copyi");
        checkNoPartialOverlap(self, src, "copyi");
        if (Autograd.needsGrad(self, src)) {
            // The old value of self gets a zero gradient (it was overwritten), src gets the incoming one.
            Tensor history = self.detach();
            if (self.gradFn() != null) {
                AutogradMeta.setGradFn(history, self.gradFn(), self.outputNr());
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
