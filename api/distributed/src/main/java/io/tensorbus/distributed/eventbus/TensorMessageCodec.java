package io.tensorbus.distributed.eventbus;

import io.tensorbus.io.CodecException;
import io.tensorbus.io.ObjectCodec;
import io.tensorbus.tensor.Tensor;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.eventbus.MessageCodec;

/**
 * Tensors on the Vert.x event bus: within one JVM the receiver gets the sender's tensor itself (no copy: treat it as
 * read-only once sent, or send a clone); across a clustered event bus the tensor travels in the project's binary
 * tensor format ({@link ObjectCodec}'s: dtype, requires-grad flag, shape, little-endian elements), length-prefixed,
 * and is checked against the frame before anything is allocated. {@link #register} makes it the default codec of
 * {@link Tensor}, so {@code eventBus.send(address, tensor)} just works. Stateless and thread-safe.
 */
public final class TensorMessageCodec implements MessageCodec<Tensor, Tensor> {
    /** The codec's name on the event bus. */
    public static final String NAME = "tensorbus-tensor";
    private static final ObjectCodec CODEC = ObjectCodec.standard();

    /**
     * Registers this codec as the default one of {@link Tensor} on {@code vertx}'s event bus (every member of a
     * cluster that sends or receives tensors registers it).
     *
     * @throws IllegalStateException when a codec of that name or class is already registered
     */
    public static void register(Vertx vertx) {
        vertx.eventBus().registerDefaultCodec(Tensor.class, new TensorMessageCodec());
    }

    @Override
    public void encodeToWire(Buffer buffer, Tensor tensor) {
        byte[] bytes = CODEC.encode(tensor);
        buffer.appendInt(bytes.length).appendBytes(bytes);
    }

    /**
     * Reads a tensor from a clustered frame.
     *
     * @throws IllegalArgumentException for a length that overruns the frame or bytes that are not one tensor
     */
    @Override
    public Tensor decodeFromWire(int pos, Buffer buffer) {
        if (pos < 0 || buffer.length() - pos < 4) {
            throw new IllegalArgumentException("a tensor frame shorter than its 4-byte length");
        }
        int length = buffer.getInt(pos);
        if (length < 0 || length > buffer.length() - pos - 4) {
            throw new IllegalArgumentException("a tensor frame announces " + length + " bytes but holds "
                    + (buffer.length() - pos - 4));
        }
        try {
            return CODEC.decode(buffer.getBytes(pos + 4, pos + 4 + length), Tensor.class);
        } catch (CodecException e) {
            throw new IllegalArgumentException("a tensor frame that holds no tensor: " + e.getMessage(), e);
        }
    }

    /** The sender's tensor itself: a local message is not copied. */
    @Override
    public Tensor transform(Tensor tensor) {
        return tensor;
    }

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public byte systemCodecID() {
        return -1;
    }
}
