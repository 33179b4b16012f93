package io.tensorbus.tensor.archfixture;

import io.tensorbus.internal.tensor.Strided;

/** A user-facing class whose public method hands out an internal type: the rule on user signatures reports it. */
public final class LeaksAnInternalType {
    private LeaksAnInternalType() {
    }

    /** An internal type in a public signature. */
    public static Strided.View view() {
        return null;
    }

    /** A signature of user types only, which the rule passes. */
    public static String name() {
        return "fine";
    }
}
