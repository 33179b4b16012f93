package io.tensorbus.c10d;

import io.tensorbus.DType;
/**
 * How a reducing collective combines the tensors of the ranks, as {@code torch.distributed.ReduceOp}.
 * {@link #AVG} divides the sum by the group size and needs a floating-point dtype; the bitwise ops need an
 * integer or boolean dtype.
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
    BXOR;

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
