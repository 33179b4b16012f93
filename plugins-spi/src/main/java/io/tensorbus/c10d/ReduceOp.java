package io.tensorbus.c10d;

import io.tensorbus.DType;
/**
 * How a reducing collective combines the tensors of the ranks, as {@code torch.distributed.ReduceOp}.
 * {@link #AVG} divides the sum by the group size and needs a floating-point dtype; the bitwise ops need an
 * integer or boolean dtype. {@link #PREMUL_SUM} travels with its factor as {@link PremulSum}.
 */
public enum ReduceOp {
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
    /**
     * The sum of every rank's tensor multiplied by a factor (floating-point dtypes only). It needs its factor, so
     * collectives take it as {@link #premulSum(double)}; passed alone it is refused.
     */
    PREMUL_SUM;

    /**
     * {@link #PREMUL_SUM} with {@code factor}, as PyTorch's {@code _make_nccl_premul_sum(factor)}.
     *
     * @throws IllegalArgumentException when {@code factor} is NaN or infinite
     */
    public static PremulSum premulSum(double factor) {
        return new PremulSum(factor);
    }

    /** True for the ops that only integer and boolean dtypes admit. */
    public boolean isBitwise() {
        return this == BAND || this == BOR || this == BXOR;
    }

    /**
     * Checks that this op is defined for {@code dtype}.
     *
     * @throws IllegalArgumentException naming the op, the dtype and what is allowed
     */
    public void checkSupports(DType dtype) {
        if (this == PREMUL_SUM) {
            throw new IllegalArgumentException("ReduceOp.PREMUL_SUM needs its factor: pass ReduceOp.premulSum(factor)");
        }
        if (isBitwise() && dtype.isFloatingPoint()) {
            throw new IllegalArgumentException("ReduceOp." + this + " is not defined for " + dtype
                    + ": bitwise reductions need an integer or bool dtype");
        }
        if (this == AVG && !dtype.isFloatingPoint()) {
            throw new IllegalArgumentException("ReduceOp.AVG is not defined for " + dtype
                    + ": it needs a floating-point dtype (use SUM and divide)");
        }
    }
}
