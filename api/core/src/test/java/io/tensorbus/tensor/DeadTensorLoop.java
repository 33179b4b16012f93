package io.tensorbus.tensor;

import io.tensorbus.DType;

/**
 * A child JVM's program for {@link NativeMemoryPacerTest}: a loop that allocates a 160 KiB tensor per iteration
 * and almost nothing on the heap, as a user's loop of collectives does, then prints the most storage it saw
 * alive and how many young collections the pacer nudged.
 */
public final class DeadTensorLoop {
    private DeadTensorLoop() {
    }

    /** {@code args[0]}: iterations. */
    public static void main(String[] args) {
        int iterations = Integer.parseInt(args[0]);
        long maxLive = 0;
        double sum = 0;
        for (int i = 0; i < iterations; i++) {
            Tensor t = Tensor.full(i % 7, DType.FLOAT32, 40 * 1024);
            sum += t.getDouble(i % 1000);
            maxLive = Math.max(maxLive, NativeMemoryPacer.liveBytes());
        }
        System.out.println("maxLiveMiB=" + (maxLive >> 20) + " nudged=" + NativeMemoryPacer.nudged() + " sum=" + sum);
    }
}
