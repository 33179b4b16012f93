package io.tensorbus.internal.tensor;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.tensorbus.tensor.Generator;
import org.junit.jupiter.api.Test;

class PhiloxTest {
    @Test
    void blocksMatchRandom123sKnownAnswers() {
        // Random123's kat_vectors: counter[4], key[2] -> output[4].
        assertArrayEquals(new int[] {0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}, Philox.block(0L, 0, 0, 0, 0));
        assertArrayEquals(new int[] {0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd},
                Philox.block(-1L, -1, -1, -1, -1));
        assertArrayEquals(new int[] {0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1},
                Philox.block(0x299f31d0a4093822L, 0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344));
        assertArrayEquals(Philox.block(7L, 0x12345678, 0x9, 0, 0), Philox.block(7L, 0x9_12345678L));
    }

    @Test
    void fillComputesEachElementAsUniformDoesAlone() {
        double[] u = new double[11];
        Philox.fill(42, 3, u);
        for (int i = 0; i < u.length; i++) {
            assertEquals(Philox.uniform(42, 3, i), u[i], 0.0, "element " + i);
            assertTrue(u[i] >= 0 && u[i] < 1, "in [0, 1): " + u[i]);
        }
        double[] later = new double[7];
        Philox.fill(42, 4, later);
        assertEquals(u[4], later[0], 0.0, "offset counts blocks of four");
    }

    @Test
    void drawsAreUniform() {
        double[] u = new double[200_000];
        Philox.fill(1, 0, u);
        int[] bins = new int[10];
        for (double v : u) {
            bins[(int) (v * 10)]++;
        }
        for (int b : bins) {
            assertEquals(20_000, b, 600, "bin count");
        }
    }

    @Test
    void reserveMovesTheGeneratorPastItsBlocks() {
        Generator g = new Generator(9);
        assertEquals(0, Philox.reserve(g, 5));
        assertEquals(2, g.offset());
        assertEquals(2, Philox.reserve(g, 4));
        assertEquals(3, Philox.reserve(g, 0));
        assertEquals(0, g.manualSeed(9).offset());
        assertEquals(5, g.setOffset(5).offset());
        assertThrows(IllegalArgumentException.class, () -> g.setOffset(-1));
        assertThrows(IllegalArgumentException.class, () -> Philox.reserve(g, -1));
    }
}
