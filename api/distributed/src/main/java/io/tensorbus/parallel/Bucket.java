package io.tensorbus.parallel;

import io.tensorbus.DType;
import io.tensorbus.Device;
import io.tensorbus.distributed.algorithms.GradBucket;
import io.tensorbus.tensor.MemoryScope;
import io.tensorbus.tensor.Tensor;
import io.vertx.core.Future;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A group of parameters whose gradients travel together in one collective (the {@code Bucket} of
 * PyTorch's reducer): a flat buffer of one dtype, a view of it per parameter, and the state of the
 * current iteration (gradients still awaited, the communication in flight).
 */
final class Bucket {
    final int index;
    final int[] params;
    final Tensor buffer;
    final Tensor[] views;
    int pending;
    Future<Tensor> work;
    /** When this step's reduction was launched and when it completed ({@link StepMeters}; 0: not measured). */
    long launchedNanos;
    volatile long reducedNanos;

    Bucket(int index, int[] params, List<Tensor> all) {
        this.index = index;
        this.params = params.clone();
        DType dtype = all.get(params[0]).dtype();
        int numel = 0;
        for (int p : params) {
            numel += all.get(p).numel();
        }
        this.buffer = Tensor.zeros(all.get(params[0]).device(), dtype, numel);
        MemoryScope.detach(buffer); // lives as long as DDP, whichever step (re)built it
        this.views = new Tensor[params.length];
        int offset = 0;
        for (int i = 0; i < params.length; i++) {
            Tensor p = all.get(params[i]);
            views[i] = buffer.narrow(0, offset, p.numel()).view(p.shape());
            offset += p.numel();
        }
    }

    /** Resets the per-iteration state: every gradient awaited again, nothing in flight. */
    void reset() {
        pending = params.length;
        work = null;
    }

    /** The view as a hook sees it. */
    GradBucket toGradBucket(List<Tensor> all, boolean last) {
        List<Tensor> ps = new ArrayList<>(params.length);
        for (int p : params) {
            ps.add(all.get(p));
        }
        return new GradBucket(index, buffer, ps, List.of(views), last);
    }

    /**
     * PyTorch's {@code compute_bucket_assignment_by_size}: walks the parameters from last to first (the
     * order in which backward produces their gradients), keeping one open bucket per device and dtype (a bucket's
     * buffer lives where its gradients do), and closes a
     * bucket once it reaches its cap: {@code firstCapBytes} for the first bucket (small, so that
     * communication starts early in the backward pass), {@code capBytes} after. A bucket closes with the
     * parameter that fills it, so it may pass its cap by up to one parameter.
     *
     * @return the parameter indices of each bucket, in the order the buckets are reduced
     */
    static List<int[]> assign(List<Tensor> params, long firstCapBytes, long capBytes) {
        List<int[]> done = new ArrayList<>();
        Map<Kind, List<Integer>> open = new LinkedHashMap<>();
        Map<Kind, Long> openBytes = new LinkedHashMap<>();
        for (int i = params.size() - 1; i >= 0; i--) {
            Tensor p = params.get(i);
            Kind kind = new Kind(p.device(), p.dtype());
            List<Integer> bucket = open.computeIfAbsent(kind, d -> new ArrayList<>());
            bucket.add(i);
            long bytes = openBytes.merge(kind, (long) p.numel() * p.dtype().byteSize(), Long::sum);
            if (bytes >= (done.isEmpty() ? firstCapBytes : capBytes)) {
                done.add(toArray(bucket));
                open.remove(kind);
                openBytes.remove(kind);
            }
        }
        for (List<Integer> rest : open.values()) {
            done.add(toArray(rest));
        }
        return done;
    }

    /** What parameters must share to share a bucket. */
    private record Kind(Device device, DType dtype) {
    }

    private static int[] toArray(List<Integer> list) {
        return list.stream().mapToInt(Integer::intValue).toArray();
    }
}
