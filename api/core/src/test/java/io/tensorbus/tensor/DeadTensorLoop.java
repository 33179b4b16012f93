package io.tensorbus.tensor;

import io.tensorbus.DType;

/**
 * A child JVM's program for {@link NativeMemoryPacerTest}: a loop that allocates a 160 KiB tensor per iteration
 * and almost nothing on the heap, as a user's loop of collectives does, then prints the most storage it saw
 * alive, how many young collections the pacer nudged and how many full ones it asked for.
 */
public final class DeadTensorLoop {
    private DeadTensorLoop() {
    }

    /**
     * {@code args[0]}: iterations; {@code args[1]}, optional: {@code scoped} to run each step of 40 iterations in a
     * {@link MemoryScope}, as a training loop does.
     */
    public static void main(String[] args) {
        int iterations = Integer.parseInt(args[0]);
        boolean scoped = args.length > 1 && args[1].equals("scoped");
        long maxLive = 0;
        double sum = 0;
        for (int i = 0; i < iterations; i += 40) {
            try (MemoryScope step = scoped ? MemoryScope.open() : null) {
                for (int k = i; k < Math.min(iterations, i + 40); k++) {
                    Tensor t = Tensor.full(k % 7, DType.FLOAT32, 40 * 1024);
                    sum += t.getDouble(k % 1000);
                    maxLive = Math.max(maxLive, NativeMemoryPacer.liveBytes());
                }
            }
        }
        System.out.println("maxLiveMiB=" + (maxLive >> 20) + " nudged=" + NativeMemoryPacer.nudged() + " requested="
                + NativeMemoryPacer.requested() + " sum=" + sum);
    }
}
