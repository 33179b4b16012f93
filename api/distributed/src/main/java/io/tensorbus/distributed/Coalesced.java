package io.tensorbus.distributed;

import io.tensorbus.tensor.Tensor;
import java.util.List;
import java.util.Objects;

/**
 * The coalesced collectives' packing: a list of tensors of one dtype and device copied into one flat tensor, so
 * that a single collective carries them all, and copied back out of it.
 */
final class Coalesced {
    private Coalesced() {
    }

    /**
     * A new flat tensor holding the elements of {@code tensors} one after the other.
     *
     * @throws IllegalArgumentException when {@code tensors} is empty or mixes dtypes or devices
     */
    static Tensor flatten(List<Tensor> tensors, String what) {
        if (tensors == null || tensors.isEmpty()) {
            throw new IllegalArgumentException(what + " must hold at least one tensor");
        }
        Tensor first = Objects.requireNonNull(tensors.getFirst(), what + "[0] must not be null");
        long total = 0;
        for (int i = 0; i < tensors.size(); i++) {
            Tensor t = Objects.requireNonNull(tensors.get(i), what + "[" + i + "] must not be null");
            if (t.dtype() != first.dtype() || !t.device().equals(first.device())) {
                throw new IllegalArgumentException(what + "[" + i + "] is " + t.dtype() + " on " + t.device()
                        + "; coalescing needs one dtype and device (" + what + "[0] is " + first.dtype() + " on "
                        + first.device() + ")");
            }
            total += t.numel();
        }
        if (total > Integer.MAX_VALUE) {
            throw new IllegalArgumentException(what + " hold " + total + " elements, more than one tensor can");
        }
        Tensor flat = Tensor.empty(first.device(), first.dtype(), (int) total);
        int at = 0;
        for (Tensor t : tensors) {
            int n = t.numel();
            if (n > 0) {
                flat.narrow(0, at, n).copyi(t.reshape(n));
            }
            at += n;
        }
        return flat;
    }

    /** Copies the elements of {@code flat} from {@code offset} on back into {@code into}, one tensor after another. */
    static void unflatten(Tensor flat, List<Tensor> into, int offset) {
        int at = offset;
        for (Tensor t : into) {
            int n = t.numel();
            if (n > 0) {
                t.copyi(flat.narrow(0, at, n).reshape(t.shape()));
            }
            at += n;
        }
    }

    /**
     * Checks that {@code outputs} holds one list per rank, each with a tensor of the inputs' dtype and element
     * count in every place.
     *
     * @throws IllegalArgumentException naming the first place that does not match
     */
    static void checkOutputs(List<List<Tensor>> outputs, List<Tensor> inputs, int world) {
        if (outputs == null || outputs.size() != world) {
            throw new IllegalArgumentException("outputs holds " + (outputs == null ? "nothing" : outputs.size()
                    + " lists") + "; it needs one per rank (" + world + ")");
        }
        for (int r = 0; r < world; r++) {
            List<Tensor> list = outputs.get(r);
            if (list == null || list.size() != inputs.size()) {
                throw new IllegalArgumentException("outputs[" + r + "] holds " + (list == null ? "nothing"
                        : list.size() + " tensors") + "; it needs one per input (" + inputs.size() + ")");
            }
            for (int i = 0; i < list.size(); i++) {
                Tensor out = Objects.requireNonNull(list.get(i), "outputs[" + r + "][" + i + "] must not be null");
                Tensor in = inputs.get(i);
                if (out.dtype() != in.dtype() || out.numel() != in.numel()) {
                    throw new IllegalArgumentException("outputs[" + r + "][" + i + "] is " + out.dtype() + " with "
                            + out.numel() + " elements but must match inputs[" + i + "], " + in.dtype() + " with "
                            + in.numel());
                }
            }
        }
    }
}
