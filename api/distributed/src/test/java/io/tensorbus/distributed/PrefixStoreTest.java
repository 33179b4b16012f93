package io.tensorbus.distributed;

import io.tensorbus.c10d.Store;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** {@link PrefixStore}: the contract through two prefix views of one base, and the scoping itself. */
class PrefixStoreTest extends StoreContractTest {

    @Override
    protected Views open(Duration timeout) {
        HashStore base = new HashStore(timeout);
        return new Views(new PrefixStore("job", base), new PrefixStore("job", base));
    }

    @Override
    protected void close(Views views) {
        views.other().close();
        views.store().close();
        ((PrefixStore) views.store()).base().close();
    }

    @Test
    void prefixesIsolateKeys() throws Exception {
        try (HashStore base = new HashStore(SHORT)) {
            PrefixStore a = new PrefixStore("a", base);
            PrefixStore b = new PrefixStore("b", base);
            await(a.set("rank", bytes("0")));
            await(b.set("rank", bytes("1")));
            assertEquals("0", text(await(a.get("rank"))));
            assertEquals("1", text(await(b.get("rank"))));
            await(a.set("only-a", bytes("x")));
            assertFalse(await(b.check(List.of("only-a"))));
            assertEquals("x", text(await(base.get("a/only-a"))));
            assertEquals("1", text(await(base.get("b/rank"))));
        }
    }

    @Test
    void everyOperationIsScoped() throws Exception {
        try (HashStore base = new HashStore(LONG)) {
            Store view = new PrefixStore("p", base);
            await(view.add("n", 2));
            await(view.append("l", bytes("x")));
            await(view.compareSet("c", new byte[0], bytes("y")));
            await(view.multiSet(Map.of("m", bytes("z"))));
            assertTrue(await(base.check(List.of("p/n", "p/l", "p/c", "p/m"))));
            await(view.wait(List.of("n", "m")));
            assertEquals(2, await(view.multiGet(List.of("l", "c"))).size());
            assertTrue(await(view.deleteKey("n")));
            assertFalse(await(base.check(List.of("p/n"))));
        }
    }

    @Test
    void prefixStoresNest() throws Exception {
        try (HashStore base = new HashStore(LONG)) {
            Store nested = new PrefixStore("inner", new PrefixStore("outer", base));
            await(nested.set("k", bytes("v")));
            assertEquals("v", text(await(base.get("outer/inner/k"))));
        }
    }

    @Test
    void numKeysCountsTheWholeBaseStore() throws Exception {
        try (HashStore base = new HashStore(LONG)) {
            await(base.set("outside", bytes("x")));
            PrefixStore view = new PrefixStore("p", base);
            await(view.set("inside", bytes("y")));
            assertEquals(2L, await(view.numKeys()));
        }
    }

    @Test
    void closingAPrefixStoreLeavesTheBaseOpen() throws Exception {
        try (HashStore base = new HashStore(LONG)) {
            PrefixStore view = new PrefixStore("p", base);
            view.close();
            await(base.set("still", bytes("open")));
            assertEquals("open", text(await(base.get("still"))));
            await(view.set("after-close", bytes("works")));
            assertEquals("works", text(await(base.get("p/after-close"))));
            assertSame(base, view.base());
            assertEquals("p", view.prefix());
            assertEquals(LONG, view.timeout());
        }
    }

    @Test
    void constructorRejectsNulls() {
        assertThrows(NullPointerException.class, () -> new PrefixStore(null, new HashStore()));
        assertThrows(NullPointerException.class, () -> new PrefixStore("p", null));
    }
}
