package io.tensorbus.backend.tcp;

/** The operations a data frame can belong to, with their wire codes and their names in the Java API. */
enum Opcode {
    SEND(1, "send"),
    BROADCAST(2, "broadcast"),
    ALL_REDUCE(3, "allReduce"),
    REDUCE(4, "reduce"),
    ALL_GATHER(5, "allGather"),
    GATHER(6, "gather"),
    SCATTER(7, "scatter"),
    REDUCE_SCATTER(8, "reduceScatter"),
    ALL_TO_ALL(9, "allToAll"),
    BARRIER(10, "barrier");

    final int code;
    final String javaName;

    Opcode(int code, String javaName) {
        this.code = code;
        this.javaName = javaName;
    }

    /** The opcode with wire code {@code code}, or null. */
    static Opcode of(int code) {
        for (Opcode o : values()) {
            if (o.code == code) {
                return o;
            }
        }
        return null;
    }
}
