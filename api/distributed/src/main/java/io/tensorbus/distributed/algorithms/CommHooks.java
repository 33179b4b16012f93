package io.tensorbus.distributed.algorithms;

import io.tensorbus.DType;
import io.tensorbus.autograd.Autograd;
import io.tensorbus.tensor.Tensor;
import io.vertx.core.Future;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * The built-in communication hooks of PyTorch's {@code torch.distributed.algorithms.ddp_comm_hooks}:
 * the default all-reduce, the fp16 / bf16 compression hooks (which halve the bytes on the wire at the
 * cost of rounding each gradient to 11 (fp16) or 8 (bf16) significant bits) and their wrappers of another
 * hook, PowerSGD's low-rank hooks, and the no-op hook that skips communication.
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
    /**
     * {@code noop_hook}: returns the bucket as it is, without communicating: each rank keeps its local gradients
     * (for measuring what communication costs, not for training).
     */
    public static CommHook noop() {
        return (group, bucket) -> Future.succeededFuture(bucket.buffer());
    }

    /**
     * {@code fp16_compress_wrapper}: runs {@code hook} on the bucket cast to float16, so that whatever it sends is
     * half the size; DDP casts its result back into the bucket.
     *
     * @throws NullPointerException when {@code hook} is null
     */
    public static CommHook fp16CompressWrapper(CommHook hook) {
        return compressedWrapper(hook, DType.FLOAT16);
    }

    /**
     * {@code bf16_compress_wrapper}: as {@link #fp16CompressWrapper} with bfloat16.
     *
     * @throws NullPointerException when {@code hook} is null
     */
    public static CommHook bf16CompressWrapper(CommHook hook) {
        return compressedWrapper(hook, DType.BFLOAT16);
    }

    private static CommHook compressedWrapper(CommHook hook, DType wire) {
        Objects.requireNonNull(hook, "hook");
        return (group, bucket) -> {
            Tensor compressed;
            List<Tensor> views = new ArrayList<>();
            try (var ignored = Autograd.noGrad()) {
                compressed = bucket.buffer().to(wire);
                int at = 0;
                for (Tensor p : bucket.parameters()) {
                    views.add(compressed.narrow(0, at, p.numel()).view(p.shape()));
                    at += p.numel();
                }
            }
            return hook.apply(group, new GradBucket(bucket.index(), compressed, bucket.parameters(), views,
                    bucket.isLast()));
        };
    }

    /**
     * {@code powerSGD_hook}: each gradient matrix of the bucket worth it (see {@link PowerSGDState}) is sent as its
     * rank-r factors P and Q, the other tensors as they are; before {@code startPowerSGDIter} it all-reduces. The
     * hook waits for P's all-reduce on the backward thread before it can compute Q.
     *
     * @throws NullPointerException when {@code state} is null
     */
    public static CommHook powerSGD(PowerSGDState state) {
        Objects.requireNonNull(state, "state");
        return (group, bucket) -> PowerSGD.hook(state, group, bucket);
    }

    /**
     * {@code batched_powerSGD_hook}: the whole bucket viewed as one zero-padded square matrix and compressed at once.
     *
     * @throws NullPointerException when {@code state} is null
     */
    public static CommHook batchedPowerSGD(PowerSGDState state) {
        Objects.requireNonNull(state, "state");
        return (group, bucket) -> PowerSGD.batchedHook(state, group, bucket);
    }

    /**
     * {@code post_localSGD_hook}: the whole group all-reduces gradients for the state's first iterations, then only
     * its subgroup does (or nobody): local SGD, whose models a
     * {@link io.tensorbus.distributed.algorithms.PeriodicModelAverager} brings back together.
     *
     * @throws NullPointerException when {@code state} is null
     */
    public static CommHook postLocalSGD(PostLocalSGDState state) {
        Objects.requireNonNull(state, "state");
        return state::apply;
    }

    /**
     * {@code quantization_pertensor_hook}: each rank sends its bucket as 8-bit integers with one scale and zero point
     * (a min-max observer's), every rank dequantizes all of them and averages; a quarter of float32's bytes, each
     * gradient off by at most half its rank's scale.
     */
    public static CommHook quantizationPerTensor() {
        return (group, bucket) -> Quantization.hook(group, bucket, 0);
    }

    /**
     * {@code quantization_perchannel_hook}: as {@link #quantizationPerTensor()} with a scale and zero point for each
     * channel of {@code bucketSize} elements (512 in PyTorch), which keeps small gradients next to large ones
     * precise.
     *
     * @throws IllegalArgumentException when {@code bucketSize} is below 1
     */
    public static CommHook quantizationPerChannel(int bucketSize) {
        if (bucketSize < 1) {
            throw new IllegalArgumentException("bucketSize must be at least 1, got " + bucketSize);
        }
        return (group, bucket) -> Quantization.hook(group, bucket, bucketSize);
    }
}
