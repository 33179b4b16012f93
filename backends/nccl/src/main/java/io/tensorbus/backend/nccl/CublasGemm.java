package io.tensorbus.backend.nccl;

import io.tensorbus.DType;
import io.tensorbus.spi.GemmOperand;
import java.util.concurrent.CompletableFuture;
import jcuda.Pointer;
import jcuda.jcublas.JCublas2;
import jcuda.jcublas.cublasHandle;
import jcuda.jcublas.cublasOperation;
import jcuda.runtime.cudaStream_t;

/**
 * The device GEMMs of one CUDA device through cuBLAS (JCuda's JCublas2), on the device's stream, so they queue
 * after the tensor work before them. cuBLAS is column-major and tensors are row-major: a row-major {@code C = op(A)
 * op(B)} is the column-major {@code C^T = op(B)^T op(A)^T}, so the call swaps the operands ({@link #columnMajor}).
 * {@code libcublas.so.12} (and {@code libcublasLt.so.12}) is looked for as {@link LibraryPath} says; where it is
 * missing, the runtime keeps the dialect's own GEMM kernel.
 */
final class CublasGemm {
    private final CudaDevice device;
    private final cublasHandle handle = new cublasHandle();

    private CublasGemm(CudaDevice device) {
        this.device = device;
        device.makeCurrent();
        JCublas2.setExceptionsEnabled(true);
        JCublas2.cublasCreate(handle);
        JCublas2.cublasSetStream(handle, new cudaStream_t(device.stream()));
    }

    /**
     * cuBLAS on {@code device}.
     *
     * @throws IllegalStateException when cuBLAS cannot be loaded or initialised, saying where it was looked for
     */
    static CublasGemm open(CudaDevice device) {
        LibraryPath.Result lt = LibraryPath.CUBLAS_LT.find();
        LibraryPath.Result blas = LibraryPath.CUBLAS.find();
        try {
            lt.path().ifPresent(p -> System.load(p.toAbsolutePath().toString()));
            blas.path().ifPresent(p -> System.load(p.toAbsolutePath().toString()));
            return new CublasGemm(device);
        } catch (LinkageError | RuntimeException e) {
            throw new IllegalStateException("cuBLAS did not load: " + (blas.path().isPresent() ? e.getMessage()
                    : LibraryPath.CUBLAS.missing(blas)), e);
        }
    }

    /**
     * The column-major cuBLAS call of a row-major GEMM: cuBLAS's {@code A} is our {@code b}, its {@code B} our
     * {@code a}, its {@code m} our {@code n}; a row-major operand read as stored is its transpose in column-major.
     *
     * @param transA cuBLAS's first operand transposed
     * @param transB cuBLAS's second operand transposed
     * @param m rows of cuBLAS's result (our {@code n})
     * @param n columns of cuBLAS's result (our {@code m})
     * @param k the inner size
     * @param first cuBLAS's {@code A} (our {@code b})
     * @param second cuBLAS's {@code B} (our {@code a})
     */
    record Call(boolean transA, boolean transB, int m, int n, int k, GemmOperand first, GemmOperand second) {
    }

    static Call columnMajor(int m, int n, int k, GemmOperand a, GemmOperand b) {
        return new Call(b.transposed(), a.transposed(), n, m, k, b, a);
    }

    /** {@code C = alpha * op(A) op(B) + beta * C} for checked operands on this device. */
    CompletableFuture<Void> run(int batch, int m, int n, int k, double alpha, GemmOperand a, GemmOperand b,
            double beta, GemmOperand c) {
        Call call = columnMajor(m, n, k, a, b);
        int ta = call.transA() ? cublasOperation.CUBLAS_OP_T : cublasOperation.CUBLAS_OP_N;
        int tb = call.transB() ? cublasOperation.CUBLAS_OP_T : cublasOperation.CUBLAS_OP_N;
        device.makeCurrent();
        if (c.buffer().dtype() == DType.FLOAT32) {
            JCublas2.cublasSgemmStridedBatched(handle, ta, tb, call.m(), call.n(), k,
                    Pointer.to(new float[] {(float) alpha}), address(call.first()), (int) call.first().ld(),
                    call.first().batchStride(), address(call.second()), (int) call.second().ld(),
                    call.second().batchStride(), Pointer.to(new float[] {(float) beta}), address(c), (int) c.ld(),
                    c.batchStride(), batch);
        } else {
            JCublas2.cublasDgemmStridedBatched(handle, ta, tb, call.m(), call.n(), k,
                    Pointer.to(new double[] {alpha}), address(call.first()), (int) call.first().ld(),
                    call.first().batchStride(), address(call.second()), (int) call.second().ld(),
                    call.second().batchStride(), Pointer.to(new double[] {beta}), address(c), (int) c.ld(),
                    c.batchStride(), batch);
        }
        return device.afterQueuedWork("cuBLAS gemm");
    }

    private static Pointer address(GemmOperand o) {
        CudaBuffer b = (CudaBuffer) o.buffer();
        return CudaDevice.at(b.address() + o.offset() * b.dtype().byteSize());
    }
}
