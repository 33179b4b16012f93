/**
 * Complete models: {@link io.tensorbus.nn.models.ResNet} (torchvision's ResNet-50 and its blocks) and
 * {@link io.tensorbus.nn.models.MnistNet} (the distributed tutorial's network).
 *
 * <p>Threads: as {@link io.tensorbus.nn}: the calling thread and the compute pool.
 */
package io.tensorbus.nn.models;
