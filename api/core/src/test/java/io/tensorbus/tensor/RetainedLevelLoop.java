package io.tensorbus.tensor;

import io.tensorbus.DType;
import java.util.ArrayDeque;

/**
 * A child JVM's program for {@link NativeMemoryPacerTest}: a loop of dead 160 KiB tensors, as {@link DeadTensorLoop},
 * that also holds tensors across collections, then prints how many full collections the pacer asked for and the most
 * storage it saw alive.
 * <ul>
 *   <li>{@code swing}: 40 MiB held for 40 iterations, then dropped for 40: what collections leave alive swings as
 *       under ranks that share a JVM, while nothing piles up;</li>
 *   <li>{@code pile}: each tensor held for 600 iterations: it outlives many young collections and dies old, where
 *       only a full collection finds it.</li>
 * </ul>
 */
public final class RetainedLevelLoop {
    private RetainedLevelLoop() {
    }

    /** {@code args[0]}: swing or pile; {@code args[1]}: iterations. */
    public static void main(String[] args) {
        boolean swing = args[0].equals("swing");
        int iterations = Integer.parseInt(args[1]);
        ArrayDeque<Tensor> held = new ArrayDeque<>();
        long maxLive = 0;
        double sum = 0;
        for (int i = 0; i < iterations; i++) {
            Tensor t = Tensor.full(i % 7, DType.FLOAT32, 40 * 1024);
            sum += t.getDouble(i % 1000);
            if (swing) {
                if (i % 80 < 40) {
                    held.add(Tensor.full(1, DType.FLOAT32, 256 * 1024));
                } else {
                    held.clear();
                }
            } else {
                held.add(t);
                if (held.size() > 600) {
                    held.poll();
                }
            }
            maxLive = Math.max(maxLive, NativeMemoryPacer.liveBytes());
        }
        System.out.println("requested=" + NativeMemoryPacer.requested() + " maxLiveMiB=" + (maxLive >> 20) + " sum="
                + sum);
    }
}
