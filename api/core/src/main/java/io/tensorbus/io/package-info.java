/**
 * Reading and writing tensors in the formats PyTorch and NumPy users exchange: {@link io.tensorbus.io.Npy}
 * ({@code .npy}), {@link io.tensorbus.io.Npz} ({@code .npz} state dicts) and
 * {@link io.tensorbus.io.SafeTensors} (Hugging Face safetensors).
 *
 * <p>Every reader validates its input completely and reports a malformed file as a
 * {@link io.tensorbus.io.TensorFormatException} naming the file, the problem and what is allowed. No reader
 * evaluates code or deserializes objects: pickled {@code .npy} object arrays and PyTorch's pickle-based
 * {@code .pt} files are not read. Writers replace a file only once the new content is complete.
 *
 * <p>Threads: readers and writers do blocking file I/O on the calling thread: never call them on an event loop.
 */
package io.tensorbus.io;
