package io.tensorbus.c10d;

import io.tensorbus.DType;
import java.util.List;

/**
 * How a reducing collective combines the tensors of the ranks, as {@code torch.distributed.ReduceOp}: a value of
 * a {@link Type} and, for {@link Type#PREMUL_SUM}, its factor (c10d's {@code ReduceOp} with its supplement).
 * {@link #AVG} divides the sum by the group size and needs a floating-point dtype; the bitwise ops need an
 * integer or boolean dtype; {@link #premulSum(double)} multiplies every rank's tensor by a factor before summing.
 * Values are immutable and compare by type and factor.
 */
public final class ReduceOp {
    /**
     * The kinds of reduction (c10d's {@code RedOpType}). Their ordinals are the codes frames and device kernels
     * carry, so new kinds go at the end.
     */
    public enum Type {
        /** Element-wise sum. */
        SUM,
        /** Element-wise product. */
        PRODUCT,
        /** Element-wise maximum (NaN wins, as in PyTorch). */
        MAX,
        /** Element-wise minimum (NaN wins, as in PyTorch). */
        MIN,
        /** Element-wise mean over the ranks: the sum divided by the group size (floating-point dtypes only). */
        AVG,
        /** Bitwise and (integer and bool dtypes only). */
        BAND,
        /** Bitwise or (integer and bool dtypes only). */
        BOR,
        /** Bitwise exclusive or (integer and bool dtypes only). */
        BXOR,
        /** The sum of every rank's tensor times a factor (floating-point dtypes only): see {@link #premulSum}. */
        PREMUL_SUM
    }

    /** Element-wise sum. */
    public static final ReduceOp SUM = new ReduceOp(Type.SUM, 1);
    /** Element-wise product. */
    public static final ReduceOp PRODUCT = new ReduceOp(Type.PRODUCT, 1);
    /** Element-wise maximum (NaN wins, as in PyTorch). */
    public static final ReduceOp MAX = new ReduceOp(Type.MAX, 1);
    /** Element-wise minimum (NaN wins, as in PyTorch). */
    public static final ReduceOp MIN = new ReduceOp(Type.MIN, 1);
    /** Element-wise mean over the ranks: the sum divided by the group size (floating-point dtypes only). */
    public static final ReduceOp AVG = new ReduceOp(Type.AVG, 1);
    /** Bitwise and (integer and bool dtypes only). */
    public static final ReduceOp BAND = new ReduceOp(Type.BAND, 1);
    /** Bitwise or (integer and bool dtypes only). */
    public static final ReduceOp BOR = new ReduceOp(Type.BOR, 1);
    /** Bitwise exclusive or (integer and bool dtypes only). */
    public static final ReduceOp BXOR = new ReduceOp(Type.BXOR, 1);

    private static final List<ReduceOp> PLAIN = List.of(SUM, PRODUCT, MAX, MIN, AVG, BAND, BOR, BXOR);

    private final Type type;
    private final double factor;

    private ReduceOp(Type type, double factor) {
        this.type = type;
        this.factor = factor;
    }

    /**
     * {@link Type#PREMUL_SUM} with {@code factor}, as PyTorch's {@code _make_nccl_premul_sum(factor)}: every rank's
     * tensor times {@code factor}, summed. Process groups run it on every backend.
     *
     * @throws IllegalArgumentException when {@code factor} is NaN or infinite
     */
    public static ReduceOp premulSum(double factor) {
        if (!Double.isFinite(factor)) {
            throw new IllegalArgumentException("a PREMUL_SUM factor must be finite, got " + factor);
        }
        return new ReduceOp(Type.PREMUL_SUM, factor);
    }

    /**
     * The op of a type without a factor: the constants above, found by type (a frame's code, say).
     *
     * @throws IllegalArgumentException for {@link Type#PREMUL_SUM}, which needs its factor
     */
    public static ReduceOp of(Type type) {
        if (type == Type.PREMUL_SUM) {
            throw new IllegalArgumentException("ReduceOp.PREMUL_SUM needs its factor: use ReduceOp.premulSum(factor)");
        }
        return PLAIN.get(type.ordinal());
    }

    /** Every op without a factor, in the order of their types. */
    public static List<ReduceOp> plain() {
        return PLAIN;
    }

    /** The kind of reduction. */
    public Type type() {
        return type;
    }

    /** The factor of a {@link Type#PREMUL_SUM}; 1 for the other types. */
    public double factor() {
        return factor;
    }

    /** The code frames and device kernels carry for this op's type: its ordinal. */
    public int code() {
        return type.ordinal();
    }

    /** True for the ops that only integer and boolean dtypes admit. */
    public boolean isBitwise() {
        return type == Type.BAND || type == Type.BOR || type == Type.BXOR;
    }

    /**
     * Checks that this op is defined for {@code dtype}.
     *
     * @throws IllegalArgumentException naming the op, the dtype and what is allowed
     */
    public void checkSupports(DType dtype) {
        if (isBitwise() && dtype.isFloatingPoint()) {
            throw new IllegalArgumentException("ReduceOp." + type + " is not defined for " + dtype
                    + ": bitwise reductions need an integer or bool dtype");
        }
        if (type == Type.AVG && !dtype.isFloatingPoint()) {
            throw new IllegalArgumentException("ReduceOp.AVG is not defined for " + dtype
                    + ": it needs a floating-point dtype (use SUM and divide)");
        }
        if (type == Type.PREMUL_SUM && !dtype.isFloatingPoint()) {
            throw new IllegalArgumentException("ReduceOp.PREMUL_SUM is not defined for " + dtype
                    + ": it needs a floating-point dtype");
        }
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof ReduceOp r && r.type == type && Double.compare(r.factor, factor) == 0;
    }

    @Override
    public int hashCode() {
        return type.hashCode() * 31 + Double.hashCode(factor);
    }

    /** The type's name, with the factor of a premultiplied sum: {@code SUM}, {@code PREMUL_SUM(0.5)}. */
    @Override
    public String toString() {
        return type == Type.PREMUL_SUM ? type + "(" + factor + ")" : type.name();
    }
}
