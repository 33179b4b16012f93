package io.tensorbus.distributed.impl;

import io.vertx.core.buffer.Buffer;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * Reads the fields of one {@code TcpStore} frame body, checking every length against the bytes that remain, so
 * that a malformed frame ends in a {@link TcpStoreProtocolException} and never in a huge allocation or a read past
 * the end.
 */
final class TcpStoreReader {

    private final Buffer frame;
    private int position;

    TcpStoreReader(Buffer frame) {
        this.frame = frame;
    }

    int remaining() {
        return frame.length() - position;
    }

    byte readByte(String field) {
        need(1, field);
        return frame.getByte(position++);
    }

    int readInt(String field) {
        need(4, field);
        int value = frame.getIntLE(position);
        position += 4;
        return value;
    }

    long readLong(String field) {
        need(8, field);
        long value = frame.getLongLE(position);
        position += 8;
        return value;
    }

    byte[] readValue(String field) {
        int length = readLength(field, 1);
        byte[] value = frame.getBytes(position, position + length);
        position += length;
        return value;
    }

    String readKey(String field) {
        byte[] raw = readValue(field);
        try {
            return StandardCharsets.UTF_8.newDecoder()
                    .onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT)
                    .decode(ByteBuffer.wrap(raw)).toString();
        } catch (CharacterCodingException e) {
            throw new TcpStoreProtocolException(field + " is not valid UTF-8");
        }
    }

    List<String> readKeys(String field) {
        int count = readCount(field, 4);
        List<String> keys = new ArrayList<>(count);
        for (int i = 0; i < count; i++) {
            keys.add(readKey(field + "[" + i + "]"));
        }
        return keys;
    }

    /** A u32 element count, checked against the remaining bytes given each element takes at least so many. */
    int readCount(String field, int minBytesEach) {
        int count = readInt(field + " count");
        long least = Integer.toUnsignedLong(count) * minBytesEach;
        if (count < 0 || least > remaining()) {
            throw new TcpStoreProtocolException(field + " count " + Integer.toUnsignedLong(count) + " needs at least "
                    + least + " bytes, only " + remaining() + " remain in the frame");
        }
        return count;
    }

    /** Requires the frame to be fully read: trailing bytes mean the two sides disagree on the format. */
    void expectEnd(String what) {
        if (remaining() != 0) {
            throw new TcpStoreProtocolException(what + " has " + remaining() + " unexpected trailing bytes");
        }
    }

    private int readLength(String field, int unit) {
        int length = readInt(field + " length");
        if (length < 0 || (long) length * unit > remaining()) {
            throw new TcpStoreProtocolException(field + " length " + Integer.toUnsignedLong(length)
                    + " exceeds the " + remaining() + " bytes left in the frame");
        }
        return length;
    }

    private void need(int bytes, String field) {
        if (remaining() < bytes) {
            throw new TcpStoreProtocolException("the frame ends before " + field + " (" + bytes + " bytes needed, "
                    + remaining() + " left)");
        }
    }
}
