package io.tensorbus.internal.autograd;

import io.tensorbus.autograd.Edge;
import io.tensorbus.tensor.Tensor;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.function.BiConsumer;

/**
 * Runs the backward graph: counts the dependencies of every node reachable from the roots, then runs
 * each node once all its gradients have arrived, newest first (as PyTorch's CPU engine).
 *
 * <p>{@link #execute} is the general entry point that distributed autograd builds on: several roots with
 * injected gradients, gradients captured at chosen edges instead of accumulated, and leaf gradients sent
 * to a caller-supplied accumulator instead of {@code .grad}.
 */
public final class Engine {
    /** Callbacks of the {@link #execute} calls running on this thread, outermost first; only the first gets any. */
    private static final ThreadLocal<Deque<List<Runnable>>> CALLBACKS = ThreadLocal.withInitial(ArrayDeque::new);

    private Engine() {
    }

    /**
     * Queues {@code callback} to run once the backward pass running on this thread has finished all its
     * nodes, before {@code backward()} returns (PyTorch's {@code Engine.queue_callback}). This is how
     * DistributedDataParallel waits for its last buckets: a hook cannot wait inside the pass, because nodes
     * still to run would be delayed. When passes nest (a node that runs backward itself, as activation
     * checkpointing does), the callback belongs to the outermost pass: it runs once everything that pass
     * started is done. Callbacks run in the order queued and may queue further callbacks; an exception from
     * one ends the pass with that exception, and the callbacks after it do not run.
     *
     * @throws IllegalStateException when no backward pass is running on this thread
     */
    public static void queueCallback(Runnable callback) {
        Objects.requireNonNull(callback, "callback");
        List<Runnable> outermost = CALLBACKS.get().peekFirst();
        if (outermost == null) {
            throw new IllegalStateException("queueCallback is only allowed while a backward pass runs on this thread"
                    + " (from a hook or a node)");
        }
        outermost.add(callback);
    }

    /**
     * What one run of the engine does besides computing gradients.
     *
     * @param retainGraph keep saved tensors so that the graph can be run again
     * @param accumulator when non-null, receives (leaf, gradient) instead of adding into {@code leaf.grad()}
     * @param captures edges whose arriving gradients are returned; when non-empty, only the nodes needed to
     *     reach them run and no {@code .grad} is touched
     */
    public record Options(boolean retainGraph, BiConsumer<Tensor, Tensor> accumulator, List<Edge> captures) {
        /** Checks the arguments and copies the capture list. */
        public Options {
            captures = captures == null ? List.of() : List.copyOf(captures);
        }
    }

    /**
     * Runs backward from {@code roots} with the given gradients.
     *
     * @return the gradients that arrived at {@link Options#captures()}, keyed by edge (absent: none arrived)
     * @throws IllegalArgumentException when the lists differ in length or an edge is null
     */
    public static Map<Edge, Tensor> execute(List<Edge> roots, List<Tensor> grads, Options options) {
        GraphTask task = new GraphTask(roots, List.of(), options);
        task.run(grads);
        return task.captured();
    }

    /** The callbacks of the passes running on this thread, outermost first (see {@link #queueCallback}). */
    static Deque<List<Runnable>> callbacks() {
        return CALLBACKS.get();
    }

    /** Forgets this thread's callback stack once its outermost pass has ended. */
    static void clearCallbacksIfIdle() {
        if (CALLBACKS.get().isEmpty()) {
            CALLBACKS.remove();
        }
    }
}
