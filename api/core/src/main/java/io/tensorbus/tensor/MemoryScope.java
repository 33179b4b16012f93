package io.tensorbus.tensor;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * Host memory whose lifetime the code knows: every tensor storage allocated on this thread while the scope is open
 * goes back to the {@link HostMemory host cache} when it closes, rather than when the garbage collector finds it
 * unreachable. A training step in a scope hands the same blocks to the next step while they are still in the CPU's
 * caches, and keeps only one step's temporaries alive (DJL's {@code NDManager}, for the JVM's missing reference
 * counts).
 *
 * <pre>{@code
 * try (MemoryScope step = MemoryScope.open()) {
 *     Tensor loss = Functional.crossEntropy(model.forward(x), y);
 *     loss.backward();
 *     optimizer.step();
 *     total += loss.item();
 * } // activations, gradients flowing through backward, the loss: all given back here
 * }</pre>
 *
 * <p>What must outlive the scope either is {@linkplain #keep kept} (then it belongs to the enclosing scope, or to
 * none) or is state that tensorbus {@linkplain #detach detaches} itself: parameters and buffers a module registers,
 * gradients stored in {@link Tensor#grad()}, optimizer state, DDP's buckets. Using a tensor after its scope gave
 * its storage back fails with an {@link IllegalStateException}; so wait for asynchronous work on a scope's tensors
 * (a collective's future) before closing it. Scopes nest, are confined to the thread that opened them and close
 * innermost first. Memory allocated by other threads (a data loader's workers, event loops) is not tracked, nor is
 * device memory, nor memory the user {@linkplain Storage#wrap wrapped}.
 */
public final class MemoryScope implements AutoCloseable {
    private static final ThreadLocal<MemoryScope> CURRENT = new ThreadLocal<>();

    private final MemoryScope parent;
    private final Thread owner;
    private final List<Storage> tracked = new ArrayList<>();
    private boolean closed;

    private MemoryScope(MemoryScope parent, Thread owner) {
        this.parent = parent;
        this.owner = owner;
    }

    /** Opens a scope on this thread, inside the one open already (if any). */
    public static MemoryScope open() {
        MemoryScope s = new MemoryScope(CURRENT.get(), Thread.currentThread());
        CURRENT.set(s);
        return s;
    }

    /**
     * Keeps {@code tensors} past this scope: their storage moves to the enclosing scope, or to none (the garbage
     * collector then returns it). Tensors this scope does not own are left as they are.
     *
     * @throws NullPointerException when a tensor is null
     * @throws IllegalStateException on a thread other than the one that opened the scope
     */
    public void keep(Tensor... tensors) {
        checkOwner("keep");
        for (Tensor t : tensors) {
            Storage s = Objects.requireNonNull(t, "tensor").storage();
            if (s.moveScope(this, parent) && parent != null) {
                parent.tracked.add(s);
            }
        }
    }

    /**
     * Takes {@code tensors} out of whichever scope owns their storage, for state that lives on (a module's
     * parameters, a gradient, an optimizer's buffers); tensorbus calls it wherever it keeps such a tensor. Any thread
     * may call it.
     *
     * @throws NullPointerException when a tensor is null
     */
    public static void detach(Tensor... tensors) {
        for (Tensor t : tensors) {
            Objects.requireNonNull(t, "tensor").storage().leaveScope();
        }
    }

    /**
     * Gives back the storage of every tensor this scope still owns; a second call does nothing.
     *
     * @throws IllegalStateException on a thread other than the one that opened it, or while a scope opened inside
     *         it is still open
     */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        checkOwner("close");
        if (CURRENT.get() != this) {
            throw new IllegalStateException("a MemoryScope was closed while a scope opened inside it is still open;"
                    + " close scopes innermost first (try-with-resources does)");
        }
        closed = true;
        if (parent == null) {
            CURRENT.remove();
        } else {
            CURRENT.set(parent);
        }
        for (Storage s : tracked) {
            // A storage kept or detached since it was allocated no longer names this scope.
            if (s.moveScope(this, null)) {
                s.release();
            }
        }
        tracked.clear();
    }

    private void checkOwner(String method) {
        if (Thread.currentThread() != owner) {
            throw new IllegalStateException("MemoryScope." + method + " runs on the thread that opened the scope ("
                    + owner.getName() + "), not on " + Thread.currentThread().getName());
        }
    }

    /** True while a scope is open on this thread: storage allocated now goes back when it closes. */
    static boolean openOnThisThread() {
        return CURRENT.get() != null;
    }

    /** Makes the innermost open scope of this thread, if any, the owner of freshly allocated {@code storage}. */
    static void track(Storage storage) {
        MemoryScope s = CURRENT.get();
        if (s != null && storage.moveScope(null, s)) {
            s.tracked.add(storage);
        }
    }
}
