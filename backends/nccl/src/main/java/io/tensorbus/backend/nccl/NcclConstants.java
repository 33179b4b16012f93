package io.tensorbus.backend.nccl;

import io.tensorbus.DType;
import io.tensorbus.c10d.ReduceOp;

/**
 * The values of {@code nccl.h}'s enums the backend uses ({@code ncclResult_t}, {@code ncclDataType_t},
 * {@code ncclRedOp_t}) and the mapping of tensorbus dtypes and reductions onto them, as PyTorch's
 * {@code ProcessGroupNCCL} maps them: bools travel as {@code ncclUint8} and reduce with MAX for SUM and MIN for
 * PRODUCT (logical or and and), and bitwise reductions have no NCCL counterpart.
 */
final class NcclConstants {
    /** {@code NCCL_UNIQUE_ID_BYTES}: the size of {@code ncclUniqueId}. */
    static final int UNIQUE_ID_BYTES = 128;

    // ncclResult_t
    static final int SUCCESS = 0;
    static final int UNHANDLED_CUDA_ERROR = 1;
    static final int SYSTEM_ERROR = 2;
    static final int INTERNAL_ERROR = 3;
    static final int INVALID_ARGUMENT = 4;
    static final int INVALID_USAGE = 5;
    static final int REMOTE_ERROR = 6;
    static final int IN_PROGRESS = 7;
    static final int TIMEOUT = 8;

    // ncclDataType_t
    static final int INT8 = 0;
    static final int UINT8 = 1;
    static final int INT32 = 2;
    static final int UINT32 = 3;
    static final int INT64 = 4;
    static final int UINT64 = 5;
    static final int FLOAT16 = 6;
    static final int FLOAT32 = 7;
    static final int FLOAT64 = 8;
    static final int BFLOAT16 = 9;

    // ncclRedOp_t
    static final int SUM = 0;
    static final int PROD = 1;
    static final int MAX = 2;
    static final int MIN = 3;
    static final int AVG = 4;

    private NcclConstants() {
    }

    /** The {@code ncclDataType_t} of {@code dtype}. */
    static int dataType(DType dtype) {
        return switch (dtype) {
            case FLOAT32 -> FLOAT32;
            case FLOAT64 -> FLOAT64;
            case FLOAT16 -> FLOAT16;
            case BFLOAT16 -> BFLOAT16;
            case INT32 -> INT32;
            case INT64 -> INT64;
            case BOOL -> UINT8;
        };
    }

    /**
     * The {@code ncclRedOp_t} of {@code op} on {@code dtype}.
     *
     * @throws IllegalArgumentException for the bitwise reductions, which NCCL does not have
     */
    static int redOp(ReduceOp op, DType dtype) {
        if (dtype == DType.BOOL) {
            return switch (op.type()) {
                case SUM, MAX, BOR -> MAX;
                case PRODUCT, MIN, BAND -> MIN;
                default -> throw unsupported(op, dtype);
            };
        }
        return switch (op.type()) {
            case SUM -> SUM;
            case PRODUCT -> PROD;
            case MAX -> MAX;
            case MIN -> MIN;
            case AVG -> AVG;
            default -> throw unsupported(op, dtype);
        };
    }

    private static IllegalArgumentException unsupported(ReduceOp op, DType dtype) {
        return new IllegalArgumentException("ReduceOp." + op + " on " + dtype + " is not supported by the nccl backend "
                + "(NCCL has SUM, PRODUCT, MAX, MIN and AVG; bools take SUM/MAX/BOR as or and PRODUCT/MIN/BAND"
                + " as and)");
    }

    /** The name of result code {@code result}, as {@code nccl.h} spells it. */
    static String resultName(int result) {
        return switch (result) {
            case SUCCESS -> "ncclSuccess";
            case UNHANDLED_CUDA_ERROR -> "ncclUnhandledCudaError";
            case SYSTEM_ERROR -> "ncclSystemError";
            case INTERNAL_ERROR -> "ncclInternalError";
            case INVALID_ARGUMENT -> "ncclInvalidArgument";
            case INVALID_USAGE -> "ncclInvalidUsage";
            case REMOTE_ERROR -> "ncclRemoteError";
            case IN_PROGRESS -> "ncclInProgress";
            case TIMEOUT -> "ncclTimeout";
            default -> "ncclResult " + result;
        };
    }

    /** True for the results that mean a peer went away or its connection broke. */
    static boolean isPeerFailure(int result) {
        return result == REMOTE_ERROR || result == SYSTEM_ERROR;
    }
}
