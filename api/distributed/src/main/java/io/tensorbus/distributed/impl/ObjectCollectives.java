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
 * {@code all_gather_object} and {@code broadcast_object_list}: objects go through the safe
 * {@link ObjectCodec} (only registered classes are ever instantiated), then as bytes through the backend's
 * tensor collectives: first the lengths, then the padded payloads.
 */
public final class ObjectCollectives {
    private ObjectCollectives() {
    }

    /** Every member's object, in rank order. */
    public static Future<List<Object>> allGather(Backend backend, Object object) {
        byte[] mine = ObjectCodec.standard().encode(object);
        int n = backend.size();
        List<DeviceBuffer> lengths = new ArrayList<>();
        for (int r = 0; r < n; r++) {
            lengths.add(longs(1));
        }
        DeviceBuffer myLength = longs(1);
        myLength.segment().set(ValueLayout.JAVA_LONG_UNALIGNED, 0, mine.length);
        return backend.allGather(lengths, myLength).compose(v -> {
            long max = 0;
            for (DeviceBuffer l : lengths) {
                max = Math.max(max, l.segment().get(ValueLayout.JAVA_LONG_UNALIGNED, 0));
            }
            DeviceBuffer padded = bytes(max);
            MemorySegment.copy(MemorySegment.ofArray(mine), 0, padded.segment(), 0, mine.length);
            List<DeviceBuffer> all = new ArrayList<>();
            for (int r = 0; r < n; r++) {
                all.add(bytes(max));
            }
            return backend.allGather(all, padded).map(w -> {
                List<Object> out = new ArrayList<>(n);
                for (int r = 0; r < n; r++) {
                    long len = lengths.get(r).segment().get(ValueLayout.JAVA_LONG_UNALIGNED, 0);
                    out.add(ObjectCodec.standard().decode(all.get(r).segment().asSlice(0, len)
                            .toArray(ValueLayout.JAVA_BYTE)));
                }
                return out;
            });
        });
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
                List<?> received = (List<?>) ObjectCodec.standard().decode(payload.segment().toArray(ValueLayout.JAVA_BYTE));
                if (received.size() != objects.size()) {
                    throw new IllegalArgumentException("broadcastObjectList: rank " + src + " sent " + received.size()
                            + " objects but this rank's list holds " + objects.size() + " (sizes must agree)");
                }
                for (int i = 0; i < received.size(); i++) {
                    objects.set(i, received.get(i));
                }
                return objects;
            });
        });
    }

    private static DeviceBuffer longs(int n) {
        return DeviceBuffer.host(MemorySegment.ofArray(new byte[8 * n]), DType.INT64, n);
    }

    /** Raw bytes travel as a bool buffer: one byte per element, copied, never reduced. */
    private static DeviceBuffer bytes(long n) {
        return DeviceBuffer.host(MemorySegment.ofArray(new byte[Math.toIntExact(n)]), DType.BOOL, n);
    }

}
