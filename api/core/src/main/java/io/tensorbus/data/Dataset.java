package io.tensorbus.data;

/**
 * A map-style dataset, as PyTorch's {@code torch.utils.data.Dataset}: {@link #size()} items, each read by its
 * position with {@link #get(int)}.
 *
 * <p>A {@link DataLoader} may call {@link #get(int)} from its background loader thread, one call at a time
 * per iterator; an implementation that several loaders share must allow concurrent reads.
 *
 * @param <T> the type of one item, for example {@code List<Tensor>} holding (input, target)
 */
public interface Dataset<T> {
    /** The number of items ({@code len(dataset)}). */
    int size();

    /**
     * The item at {@code index}.
     *
     * @throws IndexOutOfBoundsException when {@code index} is not in {@code [0, size())}
     */
    T get(int index);
}
