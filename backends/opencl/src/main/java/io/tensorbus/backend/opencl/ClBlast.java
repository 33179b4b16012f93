package io.tensorbus.backend.opencl;

import io.tensorbus.DType;
import io.tensorbus.spi.GemmOperand;
import java.util.concurrent.CompletableFuture;
import org.jocl.blast.CLBlast;
import org.jocl.blast.CLBlastLayout;
import org.jocl.blast.CLBlastTranspose;

/**
 * The device GEMMs of the OpenCL runtime, through CLBlast (JOCLBlast, which carries {@code libclblast.so}): one
 * strided-batched call per GEMM, row-major as tensors are, on the queue of the result's context. CLBlast tunes and
 * compiles its kernels per device on first use and keeps them for the process.
 */
final class ClBlast {
    static {
        CLBlast.setExceptionsEnabled(true);
    }

    private ClBlast() {
    }

    /** {@code C = alpha * op(A) op(B) + beta * C}; the operands are checked and live in {@code c}'s context. */
    static CompletableFuture<Void> gemm(int batch, int m, int n, int k, double alpha, OpenClBuffer a, GemmOperand oa,
                                        OpenClBuffer b, GemmOperand ob, double beta, OpenClBuffer c, GemmOperand oc) {
        int ta = oa.transposed() ? CLBlastTranspose.CLBlastTransposeYes : CLBlastTranspose.CLBlastTransposeNo;
        int tb = ob.transposed() ? CLBlastTranspose.CLBlastTransposeYes : CLBlastTranspose.CLBlastTransposeNo;
        int rowMajor = CLBlastLayout.CLBlastLayoutRowMajor;
        long ao = first(a, oa);
        long bo = first(b, ob);
        long co = first(c, oc);
        boolean single = c.dtype() == DType.FLOAT32;
        return c.context().enqueueOnQueue("CLBlast gemm " + batch + "x" + m + "x" + n + "x" + k, (queue, event) -> {
            if (single) {
                CLBlast.CLBlastSgemmStridedBatched(rowMajor, ta, tb, m, n, k, (float) alpha, a.mem(), ao, oa.ld(),
                        oa.batchStride(), b.mem(), bo, ob.ld(), ob.batchStride(), (float) beta, c.mem(), co, oc.ld(),
                        oc.batchStride(), batch, queue, event);
            } else {
                CLBlast.CLBlastDgemmStridedBatched(rowMajor, ta, tb, m, n, k, alpha, a.mem(), ao, oa.ld(),
                        oa.batchStride(), b.mem(), bo, ob.ld(), ob.batchStride(), beta, c.mem(), co, oc.ld(),
                        oc.batchStride(), batch, queue, event);
            }
        });
    }

    /** The element of the buffer's memory object where the operand's first matrix starts. */
    private static long first(OpenClBuffer b, GemmOperand o) {
        return b.offset() / b.dtype().byteSize() + o.offset();
    }
}
