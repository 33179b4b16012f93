package io.tensorbus.spi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.reflect.Proxy;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class OpenedRuntimeTest {
    private static DeviceRuntime fake() {
        return (DeviceRuntime) Proxy.newProxyInstance(DeviceRuntime.class.getClassLoader(),
                new Class<?>[] {DeviceRuntime.class}, (p, m, a) -> {
                    throw new UnsupportedOperationException(m.getName());
                });
    }

    @Test
    void opensOnFirstUseOnlyAndKeepsTheRuntime() {
        AtomicInteger opens = new AtomicInteger();
        DeviceRuntime rt = fake();
        OpenedRuntime<DeviceRuntime> opened = new OpenedRuntime<>(() -> {
            opens.incrementAndGet();
            return rt;
        });
        assertEquals(0, opens.get(), "constructing opens nothing");
        assertTrue(opened.isAvailable());
        assertSame(rt, opened.get());
        assertNull(opened.cause());
        assertEquals(1, opens.get());
    }

    @Test
    void aFailedOpenIsRememberedAndNamedByGet() {
        AtomicInteger opens = new AtomicInteger();
        IllegalStateException why = new IllegalStateException("no driver here: install one");
        OpenedRuntime<DeviceRuntime> opened = new OpenedRuntime<>(() -> {
            opens.incrementAndGet();
            throw why;
        });
        assertFalse(opened.isAvailable());
        assertSame(why, opened.cause());
        IllegalStateException e = assertThrows(IllegalStateException.class, opened::get);
        assertEquals("no driver here: install one", e.getMessage());
        assertSame(why, e.getCause());
        assertEquals(1, opens.get(), "the opener ran once");
    }

    @Test
    void anOpenerReturningNullCountsAsAFailure() {
        OpenedRuntime<DeviceRuntime> opened = new OpenedRuntime<>(() -> null);
        assertFalse(opened.isAvailable());
        assertTrue(opened.cause() instanceof NullPointerException, String.valueOf(opened.cause()));
    }
}
