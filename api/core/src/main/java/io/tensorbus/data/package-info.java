/**
 * Data loading, as PyTorch's {@code torch.utils.data}: {@link io.tensorbus.data.Dataset}s indexed by position,
 * {@link io.tensorbus.data.Sampler}s that choose the order, a {@link io.tensorbus.data.DataLoader} that groups
 * indices into {@link io.tensorbus.data.Batch}es and prefetches them on a background thread, the
 * {@link io.tensorbus.data.Idx} reader for MNIST-style files, and {@link io.tensorbus.data.FashionMnist}.
 *
 * <pre>{@code
 * FashionMnist train = FashionMnist.embedded(true);
 * DataLoader<List<Tensor>> loader = DataLoader.builder(train).batchSize(128).shuffle(true).seed(1234).build();
 * for (int epoch = 0; epoch < 3; epoch++) {
 *     for (Batch b : loader) {          // each for-each is one epoch, reshuffled reproducibly
 *         Tensor x = b.inputs();        // float32 [128, 1, 28, 28]
 *         Tensor y = b.targets();       // int64 [128]
 *     }
 * }
 * }</pre>
 *
 * <p>Threads: datasets and samplers run on the calling thread; a loader with prefetching assembles the next
 * batches on a virtual thread per epoch, and its iterator hands them to the training thread.
 */
package io.tensorbus.data;
