package io.tensorbus.distributed;

import io.tensorbus.tensor.Tensor;
import java.util.Objects;

/**
 * One send or receive of {@link ProcessGroup#batchIsendIrecv} ({@code torch.distributed.P2POp}): the tensor, the
 * peer's global rank, and the tag.
 *
 * @param op     a send or a receive
 * @param tensor what is sent, or where the message is received
 * @param peer   the global rank sent to or received from (a member of the group; {@code group.globalRank(r)} turns
 *               group rank r into it)
 * @param tag    the message's tag, at least 0
 */
public record P2POp(Kind op, Tensor tensor, int peer, int tag) {
    /** Which of the two point-to-point operations ({@code dist.isend} or {@code dist.irecv}). */
    public enum Kind {
        /** {@link ProcessGroup#isend(Tensor, int, int)}. */
        ISEND,
        /** {@link ProcessGroup#irecv(Tensor, int, int)}. */
        IRECV
    }

    /**
     * @throws NullPointerException     when {@code op} or {@code tensor} is null
     * @throws IllegalArgumentException when {@code tag} is negative
     */
    public P2POp {
        Objects.requireNonNull(op, "op must not be null");
        Objects.requireNonNull(tensor, "tensor must not be null");
        if (tag < 0) {
            throw new IllegalArgumentException("tag=" + tag + " must be >= 0 (negative tags are reserved)");
        }
    }

    /** A send of {@code tensor} to {@code peer} with tag 0. */
    public static P2POp isend(Tensor tensor, int peer) {
        return new P2POp(Kind.ISEND, tensor, peer, 0);
    }

    /** A receive into {@code tensor} from {@code peer} with tag 0. */
    public static P2POp irecv(Tensor tensor, int peer) {
        return new P2POp(Kind.IRECV, tensor, peer, 0);
    }
}
