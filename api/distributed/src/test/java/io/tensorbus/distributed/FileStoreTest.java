package io.tensorbus.distributed;

import io.vertx.core.Future;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** {@link FileStore}: the contract through two instances on one file, the file's life and its format. */
class FileStoreTest extends StoreContractTest {

    private static final AtomicInteger FILES = new AtomicInteger();

    @TempDir
    Path directory;

    @Override
    protected Views open(Duration timeout) {
        Path file = directory.resolve("store-" + FILES.incrementAndGet());
        return new Views(new FileStore(file, 2, timeout), new FileStore(file, 2, timeout));
    }

    @Test
    void theFileIsDeletedWhenTheLastOfWorldSizeUsersCloses() {
        Path file = directory.resolve("shared");
        FileStore first = new FileStore(file, 2, LONG);
        FileStore second = new FileStore(file, 2, LONG);
        assertTrue(Files.exists(file));
        first.close();
        assertTrue(Files.exists(file), "one user is still open");
        second.close();
        assertFalse(Files.exists(file), "the last user deletes the file");
    }

    @Test
    void aFileOfUnknownWorldSizeIsKept() {
        Path file = directory.resolve("kept");
        new FileStore(file, -1, LONG).close();
        assertTrue(Files.exists(file));
    }

    @Test
    void twoInstancesSeeEachOthersKeys() throws Exception {
        Path file = directory.resolve("pair");
        try (FileStore a = new FileStore(file, 2, LONG); FileStore b = new FileStore(file, 2, LONG)) {
            Future<byte[]> waiting = b.get("from-a");
            await(a.set("from-a", bytes("hello")));
            assertEquals("hello", text(await(waiting)));
            await(b.set("from-b", bytes("world")));
            assertEquals("world", text(await(a.get("from-b"))));
            assertEquals(2L, await(a.numKeys()), "the counters of users are not keys");
        }
    }

    @Test
    void aHandWrittenFileInTheDocumentedFormatIsRead() throws Exception {
        Path file = directory.resolve("by-hand");
        byte[] key = "greeting".getBytes(StandardCharsets.UTF_8);
        byte[] value = "hi".getBytes(StandardCharsets.UTF_8);
        ByteBuffer log = ByteBuffer.allocate(8 + 9 + key.length + value.length).order(ByteOrder.LITTLE_ENDIAN);
        log.put("TBFS".getBytes(StandardCharsets.US_ASCII)).putInt(1);
        log.put((byte) 1).putInt(key.length).put(key).putInt(value.length).put(value);
        Files.write(file, log.array());
        try (FileStore store = new FileStore(file, 1, LONG)) {
            assertEquals("hi", text(await(store.get("greeting"))));
        }
    }

    @Test
    void aFileThatIsNotAStoreFailsClearlyAtOpen() throws IOException {
        Path file = directory.resolve("not-a-store");
        Files.writeString(file, "hello, I am a text file");
        IllegalStateException error = assertThrows(IllegalStateException.class, () -> new FileStore(file, 1, LONG));
        assertTrue(error.getMessage().contains("malformed"), error.getMessage());
        assertTrue(error.getMessage().contains(file.toString()), error.getMessage());
    }

    @Test
    void aCorruptRecordFailsCallsInsteadOfHanging() throws Exception {
        Path file = directory.resolve("corrupt");
        try (FileStore store = new FileStore(file, 1, LONG)) {
            Future<byte[]> waiting = store.get("never");
            Thread.sleep(50);
            // A set record whose key length runs past the end of the file.
            Files.write(file, new byte[] {1, (byte) 0xff, (byte) 0xff, 0, 0, 0, 0, 0, 0}, StandardOpenOption.APPEND);
            Throwable error = failure(waiting);
            assertInstanceOf(IllegalStateException.class, error);
            assertTrue(error.getMessage().contains("malformed"), error.getMessage());
            Throwable later = failure(store.check(List.of("x")));
            assertTrue(later.getMessage().contains("key length"), later.getMessage());
        }
    }

    @Test
    void closedStoreFailsCalls() throws Exception {
        FileStore store = new FileStore(directory.resolve("closed"), 1, LONG);
        store.close();
        Throwable error = failure(store.set("k", bytes("v")));
        assertInstanceOf(IllegalStateException.class, error);
        assertTrue(error.getMessage().contains("closed"), error.getMessage());
        store.close();
    }

    @Test
    void constructorRejectsBadArguments() {
        Path file = directory.resolve("args");
        IllegalArgumentException world = assertThrows(IllegalArgumentException.class,
                () -> new FileStore(file, 0, LONG));
        assertTrue(world.getMessage().contains("worldSize"), world.getMessage());
        assertThrows(IllegalArgumentException.class, () -> new FileStore(file, -2, LONG));
        assertThrows(IllegalArgumentException.class, () -> new FileStore(file, 1, Duration.ZERO));
        assertThrows(NullPointerException.class, () -> new FileStore(null, 1, LONG));
        IllegalArgumentException missing = assertThrows(IllegalArgumentException.class,
                () -> new FileStore(directory.resolve("no-such-dir").resolve("f"), 1, LONG));
        assertTrue(missing.getMessage().contains("does not exist"), missing.getMessage());
        assertFalse(Files.exists(file));
    }

    @Test
    void defaultTimeoutIsThirtyMinutes() {
        try (FileStore store = new FileStore(directory.resolve("default"), 1)) {
            assertEquals(Duration.ofMinutes(30), store.timeout());
        }
    }
}
