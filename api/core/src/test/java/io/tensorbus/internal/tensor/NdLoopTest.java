package io.tensorbus.internal.tensor;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

class NdLoopTest {
    @Test
    void aChannelMaskBroadcastOverPlanesRunsOverWholePlanes() {
        NdLoop.Walk w = NdLoop.coalesce(new int[] {128, 20, 8, 8},
                new int[][] {{1280, 64, 8, 1}, {20, 1, 0, 0}, {1280, 64, 8, 1}});
        assertArrayEquals(new int[] {2560, 64}, w.shape());
        assertArrayEquals(new int[] {64, 1}, w.strides()[0]);
        assertArrayEquals(new int[] {1, 0}, w.strides()[1]);
    }

    @Test
    void sizeOneDimensionsGoAndATransposeStaysTwoDimensional() {
        NdLoop.Walk w = NdLoop.coalesce(new int[] {1, 3, 1, 4}, new int[][] {{99, 1, 7, 3}, {12, 4, 4, 1}});
        assertArrayEquals(new int[] {3, 4}, w.shape());
        assertArrayEquals(new int[] {1, 3}, w.strides()[0]);
        assertArrayEquals(new int[] {4, 1}, w.strides()[1]);
        NdLoop.Walk one = NdLoop.coalesce(new int[] {1, 1}, new int[][] {{5, 1}});
        assertArrayEquals(new int[] {1}, one.shape());
    }

    @Test
    void everyElementIsVisitedOnceAtTheOffsetsANaiveWalkGives() {
        Random random = new Random(7);
        for (int trial = 0; trial < 200; trial++) {
            int rank = 1 + random.nextInt(4);
            int[] shape = new int[rank];
            int[][] strides = new int[2][rank];
            for (int d = 0; d < rank; d++) {
                shape[d] = 1 + random.nextInt(4);
                for (int k = 0; k < 2; k++) {
                    strides[k][d] = random.nextInt(3) == 0 ? 0 : random.nextInt(40);
                }
            }
            // Operand 1 row-major, so some neighbours merge.
            int s = 1;
            for (int d = rank - 1; d >= 0; d--) {
                strides[1][d] = random.nextBoolean() ? s : strides[1][d];
                s *= shape[d];
            }
            List<String> want = naive(shape, strides);
            List<String> got = Collections.synchronizedList(new ArrayList<>());
            NdLoop.forEach(shape, new long[] {3, 5}, strides, false, (off, st, n) -> {
                for (int i = 0; i < n; i++) {
                    got.add((off[0] + (long) i * st[0]) + "," + (off[1] + (long) i * st[1]));
                }
            });
            Collections.sort(want);
            List<String> sorted = new ArrayList<>(got);
            Collections.sort(sorted);
            assertEquals(want, sorted, "shape " + Arrays.toString(shape));
        }
    }

    private static List<String> naive(int[] shape, int[][] strides) {
        List<String> out = new ArrayList<>();
        int numel = Shapes.numel(shape);
        for (int flat = 0; flat < numel; flat++) {
            long a = 3;
            long b = 5;
            int r = flat;
            for (int d = shape.length - 1; d >= 0; d--) {
                int i = r % shape[d];
                r /= shape[d];
                a += (long) i * strides[0][d];
                b += (long) i * strides[1][d];
            }
            out.add(a + "," + b);
        }
        return out;
    }
}
