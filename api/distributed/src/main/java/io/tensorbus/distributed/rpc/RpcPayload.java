package io.tensorbus.distributed.rpc;

import io.tensorbus.DType;
import io.tensorbus.internal.distributed.autograd.AutogradMeta;
import io.tensorbus.internal.distributed.autograd.DistAutogradContext;
import io.tensorbus.internal.distributed.autograd.DistAutogradRuntime;
import io.tensorbus.internal.io.TensorBytes;
import io.tensorbus.internal.tensor.TensorInternals;
import io.tensorbus.io.ObjectCodec;
import io.tensorbus.tensor.Tensor;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.BitSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The values of a call ({@code [function, arg0, arg1, ...]}) or of a result ({@code [value]}) on the wire.
 * Tensors, at the top or inside lists and map values at any depth, travel as attachments: the body holds a
 * {@link TensorSlot} in their place and a descriptor (dtype, shape, requires-grad), and their bytes follow
 * the body raw, copied from the tensor's memory into the frame and read into a new tensor's, instead of
 * through the codec. Tensors inside records, sets or map keys stay inside the body.
 */
final class RpcPayload {
    private RpcPayload() {
    }

    /**
     * Encoded values: the body, the contiguous tensors whose bytes follow it, and the RRef forks made for the
     * receiver, which stay pending until the receiver accepts them ({@link RRefContext#commit}) or are
     * dropped if the message never leaves ({@link RRefContext#abort}).
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
     * Encodes the values of a message of the agent of {@code rrefs}: RRefs in them are forked for the receiver (the
     * forks are in the result, for the caller to commit or abort).
     *
     * @throws IllegalArgumentException naming a value the codec cannot encode
     */
    static Encoded encode(RRefContext rrefs, List<Object> values) {
        return encode(rrefs, values, null);
    }

    /**
     * {@link #encode(RRefContext, List)} for a message of a distributed autograd context: {@code recorder} is
     * given the attached tensors as the caller passed them (with their history) and returns the ids the message
     * carries, or null for none.
     */
    static Encoded encode(RRefContext rrefs, List<Object> values, Recorder recorder) {
        return encode(rrefs, values, recorder, null);
    }

    /**
     * {@link #encode(RRefContext, List, Recorder)} for a call that carries the fields of its trace context
     * ({@link RpcTracing}), or none when {@code trace} is null.
     */
    static Encoded encode(RRefContext rrefs, List<Object> values, Recorder recorder, Map<String, String> trace) {
        try (RRefCodec.Scope scope = RRefCodec.open(rrefs)) {
            Encoded e = encode(rrefs.codec(), values, recorder, trace);
            return new Encoded(e.body(), e.tensors(), scope.take());
        }
    }

    /**
     * What records a message of {@code context} to {@code to} in {@code autograd}; null (nothing recorded) without
     * a context. {@code part} and {@code function} name it in errors: the "arguments" or "result" of a call.
     */
    static Recorder recorder(DistAutogradRuntime autograd, DistAutogradContext context, WorkerInfo to, String part,
                             Object function) {
        if (context == null) {
            return null;
        }
        String what = "the " + part + " of '" + function + "' to " + to;
        return sent -> autograd.recordSend(context, to.id(), what, sent);
    }

    /** Records the tensors a message sends in a distributed autograd context (see {@code DistAutogradRuntime}). */
    @FunctionalInterface
    interface Recorder {
        /** The ids the message carries, or null when nothing is recorded. */
        AutogradMeta record(List<Tensor> sent);
    }

    /** Decodes a message to the agent of {@code rrefs}: RRefs in it become references of this worker. */
    static Decoded decode(RRefContext rrefs, byte[] body, long budget) {
        try (RRefCodec.Scope ignored = RRefCodec.open(rrefs)) {
            return decode(rrefs.codec(), body, budget);
        }
    }

    private static Encoded encode(ObjectCodec codec, List<Object> values, Recorder recorder,
                                  Map<String, String> trace) {
        List<Tensor> tensors = new ArrayList<>();
        List<Tensor> sources = new ArrayList<>();
        List<Object> descriptors = new ArrayList<>();
        Object top = lift(values, tensors, sources, descriptors, 0);
        AutogradMeta meta = recorder == null ? null : recorder.record(sources);
        List<Object> parts = new ArrayList<>(meta == null ? Arrays.asList(top, descriptors)
                : Arrays.asList(top, descriptors, meta.contextId(), meta.messageId()));
        if (trace != null) {
            // Last, so that a body without it is read as before: 2 or 4 parts, 3 or 5 with it.
            parts.add(trace);
        }
        return new Encoded(codec.encode(parts), List.copyOf(tensors));
    }

    /**
     * {@code v} with every non-empty tensor in it, inside lists and map values, replaced by a
     * {@link TensorSlot}; the tensors (contiguous, detached), the tensors as given and their descriptors are added
     * in slot order.
     */
    private static Object lift(Object v, List<Tensor> tensors, List<Tensor> sources, List<Object> descriptors,
                               int depth) {
        if (v instanceof Tensor t && t.numel() > 0) {
            tensors.add(TensorBytes.contiguous(t.detach()));
            sources.add(t);
            descriptors.add(Arrays.asList(t.dtype().name(), t.shape(), t.requiresGrad()));
            return new TensorSlot(tensors.size() - 1);
        }
        if (depth > ObjectCodec.MAX_DEPTH) {
            return v;   // the codec refuses it, naming the problem
        }
        if (v instanceof List<?> list) {
            List<Object> out = new ArrayList<>(list.size());
            list.forEach(x -> out.add(lift(x, tensors, sources, descriptors, depth + 1)));
            return out;
        }
        if (v instanceof Map<?, ?> map) {
            Map<Object, Object> out = new LinkedHashMap<>();
            map.forEach((k, x) -> out.put(k, lift(x, tensors, sources, descriptors, depth + 1)));
            return out;
        }
        return v;
    }

    /**
     * Releases the references in a served call's decoded arguments (in lists and map values too), once the call
     * has returned, as PyTorch's reference counting does for a function's arguments; those the function
     * {@link RRef#keep() kept} stay. Every reference there arrived with the call: a handle of its own.
     */
    static void releaseArguments(Object args) {
        releaseArguments(args, 0);
    }

    private static void releaseArguments(Object v, int depth) {
        if (v instanceof RRef<?> r) {
            if (!r.isKept()) {
                r.close();
            }
        } else if (depth <= ObjectCodec.MAX_DEPTH && v instanceof List<?> list) {
            list.forEach(x -> releaseArguments(x, depth + 1));
        } else if (depth <= ObjectCodec.MAX_DEPTH && v instanceof Map<?, ?> map) {
            map.values().forEach(x -> releaseArguments(x, depth + 1));
        }
    }

    /** Where an attached tensor goes in the decoded values. */
    record TensorSlot(int index) {
    }

    /** A body read off the wire whose attachments, if any, are still to be filled. */
    static final class Decoded {
        private final Object top;
        private final List<Tensor> tensors;
        private final AutogradMeta meta;
        private final Map<String, String> trace;

        private Decoded(Object top, List<Tensor> tensors, AutogradMeta meta, Map<String, String> trace) {
            this.top = top;
            this.tensors = tensors;
            this.meta = meta;
            this.trace = trace;
        }

        /** The distributed autograd ids the message carries, or null. */
        AutogradMeta meta() {
            return meta;
        }

        /** The fields of the caller's trace context, checked, or null when the call carried none. */
        Map<String, String> trace() {
            return trace;
        }

        /** The attached tensors, in order (filled once the frame is read). */
        List<Tensor> tensors() {
            return tensors;
        }

        /** Where the attachment bytes go, in order. */
        List<MemorySegment> targets() {
            return tensors.stream().map(TensorBytes::of).toList();
        }

        /**
         * The values, with the filled tensors in their slots.
         *
         * @throws IllegalArgumentException when the body's slots and descriptors do not match one to one
         */
        @SuppressWarnings("unchecked")
        List<Object> values() {
            BitSet used = new BitSet();
            Object v = place(top, used);
            if (!(v instanceof List<?>) || used.cardinality() != tensors.size()) {
                throw new IllegalArgumentException("a message places " + used.cardinality() + " of its "
                        + tensors.size() + " attached tensors");
            }
            return (List<Object>) v;
        }

        private Object place(Object v, BitSet used) {
            if (v instanceof TensorSlot slot) {
                int i = slot.index();
                if (i < 0 || i >= tensors.size() || used.get(i)) {
                    throw new IllegalArgumentException("a message places attached tensor " + i + " wrongly");
                }
                used.set(i);
                return tensors.get(i);
            }
            if (v instanceof List<?> list) {
                @SuppressWarnings("unchecked")
                List<Object> l = (List<Object>) list;
                l.replaceAll(x -> place(x, used));
            } else if (v instanceof Map<?, ?> map) {
                @SuppressWarnings("unchecked")
                Map<Object, Object> m = (Map<Object, Object>) map;
                m.replaceAll((k, x) -> place(x, used));
            }
            return v;
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
        if (parts.size() < 2 || parts.size() > 5) {
            throw new IllegalArgumentException("a message body of " + parts.size() + " parts (2 to 5 are allowed)");
        }
        Map<String, String> trace = parts.size() % 2 == 1 ? RpcTracing.checkFields(parts.get(parts.size() - 1))
                : null;
        List<Object> descriptors = (List<Object>) parts.get(1);
        AutogradMeta meta = null;
        if (parts.size() >= 4) {
            if (!(parts.get(2) instanceof Long context) || !(parts.get(3) instanceof Long message)) {
                throw new IllegalArgumentException("distributed autograd ids that are not longs");
            }
            meta = new AutogradMeta(context, message);
        }
        List<Tensor> tensors = new ArrayList<>();
        long bytes = 0;
        for (int i = 0; i < descriptors.size(); i++) {
            List<Object> d = (List<Object>) descriptors.get(i);
            DType dtype = DType.valueOf((String) d.get(0));
            int[] shape = (int[]) d.get(1);
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
            // Every byte is copied in from the message before the tensor is handed out: no zero-fill.
            tensors.add(TensorInternals.uninitialized(dtype, shape)
                    .requiresGrad((Boolean) d.get(2) && dtype.isFloatingPoint()));
        }
        return new Decoded(parts.get(0), tensors, meta, trace);
    }

    /** {@code e} as a receiver would read it: tensors copied, nothing shared. */
    static Decoded copy(RRefContext rrefs, Encoded e) {
        Decoded d = decode(rrefs, e.body(), Long.MAX_VALUE);
        List<MemorySegment> from = e.segments();
        List<MemorySegment> to = d.targets();
        for (int i = 0; i < from.size(); i++) {
            MemorySegment.copy(from.get(i), 0, to.get(i), 0, from.get(i).byteSize());
        }
        return d;
    }
}
