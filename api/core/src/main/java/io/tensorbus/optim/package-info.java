/**
 * Optimizers and learning-rate schedulers, as {@code torch.optim}: {@link io.tensorbus.optim.SGD},
 * {@link io.tensorbus.optim.Adam}, {@link io.tensorbus.optim.AdamW}, {@link io.tensorbus.optim.Adagrad}, parameter
 * groups and state dicts.
 *
 * <p>Threads: {@code step} and {@code zeroGrad} run on the calling thread; an optimizer is used by one thread
 * at a time (the training thread).
 */
package io.tensorbus.optim;
