package io.tensorbus.distributed.rpc;

import io.tensorbus.io.ObjectCodec;
import io.tensorbus.io.impl.TensorBytes;
import io.tensorbus.spi.DType;
import io.tensorbus.tensor.Tensor;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * The values of a call ({@code [function, arg0, arg1, ...]}) or of a result ({@code [value]}) on the wire.
 * Top-level tensors travel as attachments: the body holds {@code null} in their place and a descriptor
 * (position, dtype, shape, requires-grad), and their bytes follow the body raw, written from the tensor's
 * memory and read into a new tensor's, instead of being copied through the codec. Tensors nested deeper
 * (in lists, maps, records) stay inside the body.
 */
final class RpcPayload {
    private RpcPayload() {
    }

    /**
     * Encoded values: the body, the contiguous tensors whose bytes follow it, and the RRef forks made for the
     * receiver, which the sender announces to their owners once the message is on its way
     * ({@link RRefContext#commit}) or drops if it never leaves ({@link RRefContext#abort}).
     */
    record Encoded(byte[] body, List<Tensor> tensors, List<RRefHandle.Child> forks) {
        /** Values without RRefs. */
        Encoded(byte[] body, List<Tensor> tensors) {
            this(body, tensors, List.of());
        }

        /** Body and attachment bytes together. */
        long bytes() {
            long n = body.length;
            for (Tensor t : tensors) {
                n += (long) t.numel() * t.dtype().byteSize();
            }
            return n;
        }

        /** The attachments' memory, in order. */
        List<MemorySegment> segments() {
            return tensors.stream().map(TensorBytes::of).toList();
        }
    }

    /**
     * Encodes the values of a message of {@code agent}: RRefs in them are forked for the receiver (the forks
     * are in the result, for the caller to commit or abort).
     *
     * @throws IllegalArgumentException naming a value the codec cannot encode
     */
    static Encoded encode(RpcAgent agent, List<Object> values) {
        try (RRefCodec.Scope scope = RRefCodec.open(agent.rrefs())) {
            Encoded e = encode(agent.options().codec(), values);
            return new Encoded(e.body(), e.tensors(), scope.take());
        }
    }

    /** Decodes a message to {@code agent}: RRefs in it become references of this worker. */
    static Decoded decode(RpcAgent agent, byte[] body, long budget) {
        try (RRefCodec.Scope ignored = RRefCodec.open(agent.rrefs())) {
            return decode(agent.options().codec(), body, budget);
        }
    }

    private static Encoded encode(ObjectCodec codec, List<Object> values) {
        List<Object> top = new ArrayList<>(values);
        List<Object> descriptors = new ArrayList<>();
        List<Tensor> tensors = new ArrayList<>();
        for (int i = 0; i < top.size(); i++) {
            if (top.get(i) instanceof Tensor t && t.numel() > 0) {
                tensors.add(TensorBytes.contiguous(t.detach()));
                descriptors.add(Arrays.asList(i, t.dtype().name(), t.shape(), t.requiresGrad()));
                top.set(i, null);
            }
        }
        return new Encoded(codec.encode(Arrays.asList(top, descriptors)), List.copyOf(tensors));
    }

    /** A body read off the wire whose attachments, if any, are still to be filled. */
    static final class Decoded {
        private final List<Object> top;
        private final int[] positions;
        private final List<Tensor> tensors;

        private Decoded(List<Object> top, int[] positions, List<Tensor> tensors) {
            this.top = top;
            this.positions = positions;
            this.tensors = tensors;
        }

        /** Where the attachment bytes go, in order. */
        List<MemorySegment> targets() {
            return tensors.stream().map(TensorBytes::of).toList();
        }

        /** The values, with the filled tensors in their places. */
        List<Object> values() {
            for (int i = 0; i < positions.length; i++) {
                top.set(positions[i], tensors.get(i));
            }
            return top;
        }
    }

    /**
     * Reads a body and allocates the tensors it describes.
     *
     * @param budget the bytes the attachments may take at most
     * @throws IllegalArgumentException for a malformed body or descriptor, or attachments over the budget
     */
    @SuppressWarnings("unchecked")
    private static Decoded decode(ObjectCodec codec, byte[] body, long budget) {
        List<Object> parts = (List<Object>) codec.decode(body, List.class);
        List<Object> top = new ArrayList<>((List<Object>) parts.get(0));
        List<Object> descriptors = (List<Object>) parts.get(1);
        int[] positions = new int[descriptors.size()];
        List<Tensor> tensors = new ArrayList<>();
        long bytes = 0;
        for (int i = 0; i < positions.length; i++) {
            List<Object> d = (List<Object>) descriptors.get(i);
            positions[i] = (Integer) d.get(0);
            if (positions[i] < 0 || positions[i] >= top.size() || top.get(positions[i]) != null
                    || (i > 0 && positions[i] <= positions[i - 1])) {
                throw new IllegalArgumentException("attachment " + i + " has a bad position " + positions[i]);
            }
            DType dtype = DType.valueOf((String) d.get(1));
            int[] shape = (int[]) d.get(2);
            long numel = 1;
            for (int dim : shape) {
                if (dim <= 0) {
                    throw new IllegalArgumentException("attachment " + i + " has a dimension " + dim
                            + " (attachments are never empty)");
                }
                numel = Math.multiplyExact(numel, dim);
            }
            bytes = Math.addExact(bytes, Math.multiplyExact(numel, dtype.byteSize()));
            if (bytes > budget || numel > Integer.MAX_VALUE) {
                throw new IllegalArgumentException("the attachments announce more than the " + budget
                        + " bytes allowed (maxMessageBytes)");
            }
            tensors.add(Tensor.empty(dtype, shape).requiresGrad((Boolean) d.get(3) && dtype.isFloatingPoint()));
        }
        return new Decoded(top, positions, tensors);
    }

    /** The values of {@code e} as a receiver would see them: tensors copied, nothing shared. */
    static List<Object> copy(RpcAgent agent, Encoded e) {
        Decoded d = decode(agent, e.body(), Long.MAX_VALUE);
        List<MemorySegment> from = e.segments();
        List<MemorySegment> to = d.targets();
        for (int i = 0; i < from.size(); i++) {
            MemorySegment.copy(from.get(i), 0, to.get(i), 0, from.get(i).byteSize());
        }
        return d.values();
    }
}
