package io.tensorbus.distributed.rpc;

import java.time.Duration;

/** Argument checks shared by the RPC types. */
final class RpcChecks {
    /** Longest worker or function name, in characters. */
    static final int MAX_NAME = 128;

    private RpcChecks() {
    }

    /** A worker name: 1 to 128 characters, none of them white space. */
    static String name(String name) {
        return check("worker", name);
    }

    /** A function name: the same rules as a worker name. */
    static String function(String name) {
        return check("function", name);
    }

    /** A timeout: 1 ms to 365 days (Vert.x timers have millisecond resolution). */
    static Duration timeout(Duration timeout) {
        if (timeout == null || timeout.compareTo(Duration.ofMillis(1)) < 0
                || timeout.compareTo(Duration.ofDays(365)) > 0) {
            throw new IllegalArgumentException("a timeout must be from 1 ms to 365 days, got " + timeout);
        }
        return timeout;
    }

    private static String check(String what, String name) {
        if (name == null || name.isEmpty() || name.length() > MAX_NAME
                || name.chars().anyMatch(Character::isWhitespace)) {
            throw new IllegalArgumentException("a " + what + " name must be 1 to " + MAX_NAME + " characters without"
                    + " white space, got " + (name == null ? "null" : "'" + name + "'"));
        }
        return name;
    }
}
