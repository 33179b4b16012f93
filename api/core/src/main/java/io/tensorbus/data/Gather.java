package io.tensorbus.data;

/** A dataset that builds a whole batch at once, faster than {@code get} per item and a stack. */
interface Gather {
    /** The items at {@code indices} collated as {@link Collate#stack} would collate them. */
    Batch gather(int[] indices);
}
