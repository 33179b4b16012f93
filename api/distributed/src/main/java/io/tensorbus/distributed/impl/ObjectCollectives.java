package io.tensorbus.distributed.impl;

import io.tensorbus.DType;
import io.tensorbus.io.ObjectCodec;
import io.tensorbus.spi.Backend;
import io.tensorbus.spi.DeviceBuffer;
import io.vertx.core.Future;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.List;

/**
 * {@code all_gather_object}, {@code gather_object}, {@code broadcast_object_list}, {@code scatter_object_list},
 * {@code send_object_list} and {@code recv_object_list}: objects go through the safe
 * {@link ObjectCodec} (only registered classes are ever instantiated), then as bytes through the backend's
 * tensor collectives: first the lengths, then the padded payloads.
 */
public final class ObjectCollectives {
    private ObjectCollectives() {
    }

    /** Every member's object, in rank order. */
    public static Future<List<Object>> allGather(Backend backend, Object object) {
        return padToLongest(backend, object).compose(p -> {
            List<DeviceBuffer> all = buffers(backend.size(), p.longest());
            return backend.allGather(all, p.mine()).map(w -> decodeAll(all, p.lengths()));
        });
    }

    /** Every member's encoded length ({@code lengths}) and this member's bytes padded to the longest. */
    private record Padded(List<DeviceBuffer> lengths, long longest, DeviceBuffer mine) {
    }

    /** Encodes {@code object} and learns every member's length (an allGather), so all pad to the longest. */
    private static Future<Padded> padToLongest(Backend backend, Object object) {
        byte[] mine = ObjectCodec.standard().encode(object);
        List<DeviceBuffer> lengths = new ArrayList<>();
        for (int r = 0; r < backend.size(); r++) {
            lengths.add(longs(1));
        }
        DeviceBuffer myLength = longs(1);
        myLength.segment().set(ValueLayout.JAVA_LONG_UNALIGNED, 0, mine.length);
        return backend.allGather(lengths, myLength).map(v -> {
            long max = 0;
            for (DeviceBuffer l : lengths) {
                max = Math.max(max, l.segment().get(ValueLayout.JAVA_LONG_UNALIGNED, 0));
            }
            DeviceBuffer padded = bytes(max);
            MemorySegment.copy(MemorySegment.ofArray(mine), 0, padded.segment(), 0, mine.length);
            return new Padded(lengths, max, padded);
        });
    }

    private static List<DeviceBuffer> buffers(int n, long bytes) {
        List<DeviceBuffer> all = new ArrayList<>(n);
        for (int r = 0; r < n; r++) {
            all.add(bytes(bytes));
        }
        return all;
    }

    /** Replaces the elements of {@code objects} with rank {@code src}'s. */
    public static Future<List<Object>> broadcastList(Backend backend, List<Object> objects, int src) {
        boolean root = backend.rank() == src;
        byte[] encoded = root ? ObjectCodec.standard().encode(new ArrayList<>(objects)) : new byte[0];
        DeviceBuffer length = longs(1);
        length.segment().set(ValueLayout.JAVA_LONG_UNALIGNED, 0, encoded.length);
        return backend.broadcast(length, src).compose(v -> {
            long n = length.segment().get(ValueLayout.JAVA_LONG_UNALIGNED, 0);
            DeviceBuffer payload = root ? DeviceBuffer.host(MemorySegment.ofArray(encoded), DType.BOOL, n) : bytes(n);
            return backend.broadcast(payload, src).map(w -> {
                if (root) {
                    return objects;
                }
                fill(objects, payload, "broadcastObjectList", src);
                return objects;
            });
        });
    }

    /**
     * Every member's object on rank {@code dst}, in rank order; an empty list on the others. The lengths go to
     * every member first, so that all pad their bytes to the longest.
     */
    public static Future<List<Object>> gather(Backend backend, Object object, int dst) {
        boolean root = backend.rank() == dst;
        return padToLongest(backend, object).compose(p -> {
            List<DeviceBuffer> all = root ? buffers(backend.size(), p.longest()) : List.of();
            return backend.gather(all, p.mine(), dst).map(w -> root ? decodeAll(all, p.lengths()) : List.of());
        });
    }

    /**
     * Rank {@code src}'s {@code inputs.get(r)} on rank r: the lengths are broadcast, then each member receives its
     * object's bytes padded to the longest.
     */
    public static Future<Object> scatter(Backend backend, List<Object> inputs, int src) {
        int n = backend.size();
        boolean root = backend.rank() == src;
        List<byte[]> encoded = new ArrayList<>();
        DeviceBuffer lengths = longs(n);
        for (int r = 0; root && r < n; r++) {
            encoded.add(ObjectCodec.standard().encode(inputs.get(r)));
            lengths.segment().set(ValueLayout.JAVA_LONG_UNALIGNED, 8L * r, encoded.get(r).length);
        }
        return backend.broadcast(lengths, src).compose(v -> {
            long max = 0;
            for (int r = 0; r < n; r++) {
                max = Math.max(max, lengths.segment().get(ValueLayout.JAVA_LONG_UNALIGNED, 8L * r));
            }
            List<DeviceBuffer> padded = new ArrayList<>();
            for (int r = 0; root && r < n; r++) {
                DeviceBuffer b = bytes(max);
                MemorySegment.copy(MemorySegment.ofArray(encoded.get(r)), 0, b.segment(), 0, encoded.get(r).length);
                padded.add(b);
            }
            DeviceBuffer mine = bytes(max);
            long myLength = lengths.segment().get(ValueLayout.JAVA_LONG_UNALIGNED, 8L * backend.rank());
            return backend.scatter(mine, padded, src).map(w -> ObjectCodec.standard().decode(
                    mine.segment().asSlice(0, myLength).toArray(ValueLayout.JAVA_BYTE)));
        });
    }

    /** Sends {@code objects} to {@code dst} with {@code tag}: their encoded length, then the bytes. */
    public static Future<Void> sendList(Backend backend, List<Object> objects, int dst, int tag) {
        byte[] encoded = ObjectCodec.standard().encode(new ArrayList<>(objects));
        DeviceBuffer length = longs(1);
        length.segment().set(ValueLayout.JAVA_LONG_UNALIGNED, 0, encoded.length);
        DeviceBuffer payload = DeviceBuffer.host(MemorySegment.ofArray(encoded), DType.BOOL, encoded.length);
        Future<Void> first = backend.send(length, dst, tag);
        return backend.send(payload, dst, tag).compose(v -> first);
    }

    /**
     * Receives a list sent by {@link #sendList} from {@code src} (or any rank) with {@code tag} into
     * {@code objects}, which must be as long; completes with the sender's rank.
     */
    public static Future<Integer> recvList(Backend backend, List<Object> objects, int src, int tag) {
        DeviceBuffer length = longs(1);
        return backend.recv(length, src, tag).compose(from -> {
            DeviceBuffer payload = bytes(length.segment().get(ValueLayout.JAVA_LONG_UNALIGNED, 0));
            return backend.recv(payload, from, tag).map(f -> {
                fill(objects, payload, "recvObjectList", from);
                return from;
            });
        });
    }

    /** Replaces the elements of {@code objects} with the list encoded in {@code payload}, sent by {@code from}. */
    private static void fill(List<Object> objects, DeviceBuffer payload, String what, int from) {
        List<?> received = (List<?>) ObjectCodec.standard().decode(payload.segment().toArray(ValueLayout.JAVA_BYTE));
        if (received.size() != objects.size()) {
            throw new IllegalArgumentException(what + ": rank " + from + " sent " + received.size()
                    + " objects but this rank's list holds " + objects.size() + " (sizes must agree)");
        }
        for (int i = 0; i < received.size(); i++) {
            objects.set(i, received.get(i));
        }
    }

    private static List<Object> decodeAll(List<DeviceBuffer> padded, List<DeviceBuffer> lengths) {
        List<Object> out = new ArrayList<>(padded.size());
        for (int r = 0; r < padded.size(); r++) {
            long len = lengths.get(r).segment().get(ValueLayout.JAVA_LONG_UNALIGNED, 0);
            out.add(ObjectCodec.standard().decode(padded.get(r).segment().asSlice(0,
                    len).toArray(ValueLayout.JAVA_BYTE)));
        }
        return out;
    }

    private static DeviceBuffer longs(int n) {
        return DeviceBuffer.host(MemorySegment.ofArray(new byte[8 * n]), DType.INT64, n);
    }

    /** Raw bytes travel as a bool buffer: one byte per element, copied, never reduced. */
    private static DeviceBuffer bytes(long n) {
        return DeviceBuffer.host(MemorySegment.ofArray(new byte[Math.toIntExact(n)]), DType.BOOL, n);
    }

}
