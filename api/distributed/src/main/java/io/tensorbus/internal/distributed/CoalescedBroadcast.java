package io.tensorbus.internal.distributed;

import io.tensorbus.autograd.Autograd;
import io.tensorbus.distributed.GroupRank;
import io.tensorbus.distributed.ProcessGroup;
import io.tensorbus.tensor.Tensor;
import io.vertx.core.Future;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Broadcasts many small tensors as a few large messages (c10d's {@code _broadcast_coalesced}): the tensors
 * of each dtype are packed into one flat buffer, the buffers are broadcast, and the receivers unpack them.
 * One message per device and dtype instead of one per tensor saves a round of latency per parameter.
 */
public final class CoalescedBroadcast {
    private CoalescedBroadcast() {
    }

    /**
     * Overwrites {@code tensors} on every rank with group rank {@code src}'s values; completes when this rank's
     * tensors hold them.
     */
    public static Future<Void> broadcast(ProcessGroup group, List<Tensor> tensors, int src) {
        Map<String, List<Tensor>> byType = new LinkedHashMap<>();
        for (Tensor t : tensors) {
            // One buffer per device and dtype: it lives where its tensors do, as a device backend needs.
            byType.computeIfAbsent(t.device() + "/" + t.dtype(), d -> new ArrayList<>()).add(t);
        }
        List<Future<Void>> works = new ArrayList<>();
        for (List<Tensor> same : byType.values()) {
            Tensor flat = pack(same);
            works.add(group.broadcast(flat, GroupRank.of(src)).map(v -> {
                unpack(flat, same);
                return null;
            }));
        }
        return Future.all(works).mapEmpty();
    }

    private static Tensor pack(List<Tensor> same) {
        int numel = same.stream().mapToInt(Tensor::numel).sum();
        Tensor flat = Tensor.zeros(same.get(0).device(), same.get(0).dtype(), numel);
        int offset = 0;
        try (var ignored = Autograd.noGrad()) {
            for (Tensor t : same) {
                flat.narrow(0, offset, t.numel()).copyi(t.reshape(-1));
                offset += t.numel();
            }
        }
        return flat;
    }

    private static void unpack(Tensor flat, List<Tensor> same) {
        int offset = 0;
        try (var ignored = Autograd.noGrad()) {
            for (Tensor t : same) {
                t.copyi(flat.narrow(0, offset, t.numel()).view(t.shape()));
                offset += t.numel();
            }
        }
    }
}
