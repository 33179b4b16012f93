package io.tensorbus.data;

import io.tensorbus.tensor.Tensor;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;

/**
 * Tensors indexed together along dimension 0 ({@code torch.utils.data.TensorDataset}): item {@code i} is the
 * list of {@code t.get(i)} for each tensor, views that share memory with the tensors. A {@link DataLoader}
 * with the default collate copies the rows of a batch directly instead of stacking views.
 */
public final class TensorDataset implements Dataset<List<Tensor>>, Gather {
    private final List<Tensor> tensors;
    private final int size;

    /**
     * A dataset over {@code tensors} (at least one, each with at least one dimension, equal in dimension 0);
     * non-contiguous tensors are copied once into contiguous ones.
     *
     * @throws IllegalArgumentException when there are no tensors, one is 0-d, or their first dimensions differ
     */
    public TensorDataset(Tensor... tensors) {
        this(Arrays.asList(Objects.requireNonNull(tensors, "tensors")));
    }

    /** As {@link #TensorDataset(Tensor...)}. */
    public TensorDataset(List<Tensor> tensors) {
        if (tensors == null || tensors.isEmpty()) {
            throw new IllegalArgumentException("TensorDataset needs at least one tensor");
        }
        List<Tensor> copy = new ArrayList<>(tensors.size());
        for (int i = 0; i < tensors.size(); i++) {
            copy.add(check(tensors.get(i), i, tensors.get(0)));
        }
        this.tensors = List.copyOf(copy);
        this.size = copy.get(0).size(0);
    }

    private static Tensor check(Tensor t, int i, Tensor first) {
        Objects.requireNonNull(t, "tensor " + i);
        if (t.dim() == 0 || first.dim() == 0) {
            throw new IllegalArgumentException("TensorDataset needs tensors with at least one dimension, tensor "
                    + (t.dim() == 0 ? i : 0) + " is 0-d");
        }
        if (t.size(0) != first.size(0)) {
            throw new IllegalArgumentException("size mismatch between tensors: tensor 0 has " + first.size(0)
                    + " rows, tensor " + i + " has " + t.size(0) + " (shape " + Arrays.toString(t.shape()) + ")");
        }
        return t.isContiguous() ? t : t.contiguous();
    }

    /** The tensors, in the order given. */
    public List<Tensor> tensors() {
        return tensors;
    }

    @Override
    public int size() {
        return size;
    }

    @Override
    public List<Tensor> get(int index) {
        Objects.checkIndex(index, size);
        List<Tensor> item = new ArrayList<>(tensors.size());
        for (Tensor t : tensors) {
            item.add(t.get(index));
        }
        return List.copyOf(item);
    }

    @Override
    public Batch gather(int[] indices) {
        Collate.width(tensors, 0);
        Tensor inputs = rows(tensors.get(0), indices);
        return new Batch(inputs, tensors.size() == 2 ? rows(tensors.get(1), indices) : null);
    }

    /** A new contiguous tensor holding the rows {@code indices} of {@code t}. */
    static Tensor rows(Tensor t, int[] indices) {
        int[] shape = t.shape();
        int n = shape[0];
        shape[0] = indices.length;
        Tensor out = Tensor.empty(t.dtype(), shape);
        long rowBytes = n == 0 ? 0 : t.dataSegment().byteSize() / n;
        MemorySegment src = t.dataSegment();
        MemorySegment dst = out.dataSegment();
        for (int j = 0; j < indices.length; j++) {
            int i = Objects.checkIndex(indices[j], n);
            MemorySegment.copy(src, i * rowBytes, dst, j * rowBytes, rowBytes);
        }
        return out;
    }
}
