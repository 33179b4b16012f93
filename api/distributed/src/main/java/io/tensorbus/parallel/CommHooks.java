package io.tensorbus.parallel;

import io.tensorbus.DType;
import io.tensorbus.autograd.Autograd;
import io.tensorbus.tensor.Tensor;

/**
 * The built-in communication hooks of PyTorch's {@code torch.distributed.algorithms.ddp_comm_hooks}:
 * the default all-reduce and the fp16 / bf16 compression hooks, which halve the bytes on the wire at the
 * cost of rounding each gradient to 11 (fp16) or 8 (bf16) significant bits.
 */
public final class CommHooks {
    private CommHooks() {
    }

    /** Divides the bucket by the world size and all-reduces it with SUM: DDP's default. */
    public static CommHook allReduce() {
        return (group, bucket) -> {
            Tensor buffer = bucket.buffer();
            try (var ignored = Autograd.noGrad()) {
                buffer.divi(group.size());
            }
            return group.allReduce(buffer).map(v -> buffer);
        };
    }

    /**
     * {@code fp16_compress_hook}: casts the bucket to float16, divides by the world size, all-reduces the
     * half-size buffer and returns it (DDP casts it back into the bucket). Sums that exceed float16's range
     * (65504) overflow to infinity.
     */
    public static CommHook fp16Compress() {
        return compressTo(DType.FLOAT16);
    }

    /** {@code bf16_compress_hook}: as {@link #fp16Compress()} with bfloat16 (float32's range, 8 significant bits). */
    public static CommHook bf16Compress() {
        return compressTo(DType.BFLOAT16);
    }

    private static CommHook compressTo(DType wire) {
        return (group, bucket) -> {
            Tensor buffer = bucket.buffer();
            Tensor compressed;
            try (var ignored = Autograd.noGrad()) {
                compressed = buffer.div(group.size()).to(wire);
            }
            // The cast back is DDP's copy of the result into the bucket, on the training thread: a continuation
            // of the all-reduce would run it on the group's event loop.
            return group.allReduce(compressed).map(v -> compressed);
        };
    }
}
