package io.tensorbus.distributed;

import io.tensorbus.c10d.Store;
import io.vertx.core.Future;
import java.time.Duration;
import java.util.List;

/**
 * The contract on a store that implements only the primitives, as a third party's might: {@link Store}'s
 * default {@code append}, {@code multiGet} and {@code multiSet} (c10d's, over {@code compareSet}, {@code get}
 * and {@code set}) must keep it.
 */
class PrimitivesOnlyStoreTest extends StoreContractTest {

    @Override
    protected Views open(Duration timeout) {
        PrimitivesOnly store = new PrimitivesOnly(new HashStore(timeout));
        return new Views(store, store);
    }

    /** Forwards the primitives to a {@link HashStore} and leaves the compound operations to the defaults. */
    private record PrimitivesOnly(HashStore memory) implements Store {
        @Override
        public Future<Void> set(String key, byte[] value) {
            return memory.set(key, value);
        }

        @Override
        public Future<byte[]> get(String key) {
            return memory.get(key);
        }

        @Override
        public Future<Long> add(String key, long delta) {
            return memory.add(key, delta);
        }

        @Override
        public Future<byte[]> compareSet(String key, byte[] expected, byte[] desired) {
            return memory.compareSet(key, expected, desired);
        }

        @Override
        public Future<Void> wait(List<String> keys, Duration timeout) {
            return memory.wait(keys, timeout);
        }

        @Override
        public Future<Boolean> deleteKey(String key) {
            return memory.deleteKey(key);
        }

        @Override
        public Future<Long> numKeys() {
            return memory.numKeys();
        }

        @Override
        public Future<Boolean> check(List<String> keys) {
            return memory.check(keys);
        }

        @Override
        public Duration timeout() {
            return memory.timeout();
        }

        @Override
        public void setTimeout(Duration timeout) {
            memory.setTimeout(timeout);
        }

        @Override
        public void close() {
            memory.close();
        }
    }
}
