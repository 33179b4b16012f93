package io.tensorbus.nn;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;

import org.junit.jupiter.api.Test;

class SequentialTest {
    @Test
    void aSliceSharesTheModulesItTakes() {
        ReLU a = new ReLU();
        ReLU b = new ReLU();
        ReLU c = new ReLU();
        Sequential s = new Sequential(a, b, c).slice(1, 3);
        assertEquals(2, s.size());
        assertSame(b, s.get(0));
        assertSame(c, s.get(1));
        var e = assertThrows(IllegalArgumentException.class, () -> new Sequential(a, b).slice(1, 3));
        assertEquals("Sequential: slice 1 to 3 of 2 modules; need 0 <= from < to <= 2", e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> new Sequential(a, b).slice(1, 1));
        assertThrows(IllegalArgumentException.class, () -> new Sequential(a, b).slice(-1, 1));
    }
}
