package io.tensorbus.c10d;

import io.tensorbus.DType;

/**
 * {@link ReduceOp#PREMUL_SUM} with its factor, as {@code torch.distributed._make_nccl_premul_sum(factor)}: every
 * rank's tensor is multiplied by {@code factor} and the products are summed. Made by
 * {@link ReduceOp#premulSum(double)}; the reducing collectives of a process group take it in place of a
 * {@link ReduceOp}, on every backend, for floating-point dtypes.
 *
 * @param factor the multiplier, finite
 */
public record PremulSum(double factor) {
    /**
     * @throws IllegalArgumentException when {@code factor} is NaN or infinite
     */
    public PremulSum {
        if (!Double.isFinite(factor)) {
            throw new IllegalArgumentException("a PREMUL_SUM factor must be finite, got " + factor);
        }
    }

    /**
     * Checks that {@code dtype} can be pre-multiplied.
     *
     * @throws IllegalArgumentException for integer and bool dtypes
     */
    public void checkSupports(DType dtype) {
        if (!dtype.isFloatingPoint()) {
            throw new IllegalArgumentException("ReduceOp.PREMUL_SUM is not defined for " + dtype
                    + ": it needs a floating-point dtype");
        }
    }
}
