package io.tensorbus.spi;

import java.util.Objects;

/**
 * One matrix of a {@link DeviceRuntime#gemm} call, row-major as tensors are: element {@code (i, j)} of the
 * {@code b}-th matrix lies at {@code offset + b * batchStride + i * ld + j} of {@code buffer} (counted in
 * elements), or at {@code offset + b * batchStride + j * ld + i} when {@code transposed}, as BLAS reads a
 * transposed operand.
 *
 * @param buffer the device memory holding the matrices
 * @param offset the first element of the first matrix, in elements from the buffer's start
 * @param ld the leading dimension: elements between two rows of the stored matrix, at least its row length
 * @param batchStride elements between two matrices of a batch
 * @param transposed whether the stored matrix is the transpose of the operand
 */
public record GemmOperand(DeviceBuffer buffer, long offset, long ld, long batchStride, boolean transposed) {
    /**
     * @throws IllegalArgumentException for a negative offset, leading dimension or batch stride
     */
    public GemmOperand {
        Objects.requireNonNull(buffer, "buffer");
        if (offset < 0 || ld < 1 || batchStride < 0) {
            throw new IllegalArgumentException("a GEMM operand needs offset >= 0, ld >= 1 and batchStride >= 0, got "
                    + offset + ", " + ld + " and " + batchStride);
        }
    }
}
