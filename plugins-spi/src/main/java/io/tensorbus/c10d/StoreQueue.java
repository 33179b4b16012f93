package io.tensorbus.c10d;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.List;

/**
 * The value of a key that {@link Store#queuePush} uses as a queue: a 16-byte nonce, then each item as a
 * little-endian 4-byte length and its bytes, head first. Every change writes a fresh nonce, so a
 * {@link Store#compareSet} that answers exactly the value it tried to write did write it.
 */
final class StoreQueue {
    private static final int NONCE_BYTES = 16;
    private static final SecureRandom RANDOM = new SecureRandom();

    private StoreQueue() {
    }

    /**
     * The items of a queue's value (an empty value is an empty queue).
     *
     * @throws IllegalStateException when {@code value} is not a queue's, naming {@code key}
     */
    static List<byte[]> items(String key, byte[] value) {
        List<byte[]> items = new ArrayList<>();
        if (value.length == 0) {
            return items;
        }
        if (value.length < NONCE_BYTES) {
            throw notAQueue(key, "it is " + value.length + " bytes long");
        }
        ByteBuffer b = ByteBuffer.wrap(value, NONCE_BYTES, value.length - NONCE_BYTES).order(ByteOrder.LITTLE_ENDIAN);
        while (b.hasRemaining()) {
            if (b.remaining() < 4) {
                throw notAQueue(key, "it ends inside an item's length");
            }
            int n = b.getInt();
            if (n < 0 || n > b.remaining()) {
                throw notAQueue(key, "an item claims " + n + " bytes where " + b.remaining() + " remain");
            }
            byte[] item = new byte[n];
            b.get(item);
            items.add(item);
        }
        return items;
    }

    /** The value of a queue holding {@code items}, with a fresh nonce. */
    static byte[] value(List<byte[]> items) {
        int size = NONCE_BYTES;
        for (byte[] item : items) {
            size = Math.addExact(size, 4 + item.length);
        }
        ByteBuffer b = ByteBuffer.allocate(size).order(ByteOrder.LITTLE_ENDIAN);
        byte[] nonce = new byte[NONCE_BYTES];
        RANDOM.nextBytes(nonce);
        b.put(nonce);
        for (byte[] item : items) {
            b.putInt(item.length).put(item);
        }
        return b.array();
    }

    private static IllegalStateException notAQueue(String key, String why) {
        return new IllegalStateException("key '" + key + "' does not hold a queue (" + why + "): use a key for"
                + " queue operations only");
    }
}
