package io.tensorbus.tensor.archfixture;

import io.vertx.core.Future;

/** A core class that names Vert.x: {@code ArchitectureTest.CORE_NEEDS_NO_VERTX} must report it. */
public final class CoreClassImportingVertx {
    private CoreClassImportingVertx() {
    }

    /** A Vert.x type in a core signature. */
    public static Future<Void> done() {
        return Future.succeededFuture();
    }
}
