package io.tensorbus.workloads.cli;

import io.tensorbus.distributed.Distributed;
import io.tensorbus.workloads.demo.WorkerVerticle;
import io.vertx.core.Promise;
import io.vertx.core.json.JsonObject;
import java.io.IOException;
import java.io.PrintStream;
import java.lang.reflect.Constructor;
import java.lang.reflect.InvocationTargetException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

/**
 * One rank of a verticle that {@code VertxApplication VERTICLE -conf JSON} would deploy in a process of its own, run
 * as a thread of {@link RankThreads} instead: the verticle must be a {@link WorkerVerticle} with the embedding
 * constructor {@code (Promise done, PrintStream out, Map env)}, through which it gets its rank's environment and
 * leaves the process to the other ranks when its work ends.
 */
final class RankVerticle {
    private RankVerticle() {
    }

    /**
     * Deploys the verticle {@code args} names with its {@code -conf} (JSON text or a JSON file) on a Vert.x of its
     * own, for the rank {@code console}'s environment describes, and waits for its work to end.
     *
     * @return 0 on success, {@link WorkerVerticle#FAILED_EXIT} when the work failed, {@link Cli#USAGE} for
     *     arguments it cannot run (said on {@code console}'s error stream)
     */
    static int run(List<String> args, Console console) {
        Constructor<? extends WorkerVerticle<?, ?>> make;
        JsonObject config;
        try {
            make = constructor(args.isEmpty() ? "" : args.getFirst());
            config = config(args.subList(Math.min(1, args.size()), args.size()));
        } catch (IllegalArgumentException e) {
            console.err().println("tensorbus: ranks as threads: " + e.getMessage());
            return Cli.USAGE;
        }
        return WorkerVerticle.runHere(make.getDeclaringClass().getSimpleName(),
                done -> construct(make, done, console), Distributed::newVertx, config, console.err());
    }

    @SuppressWarnings("unchecked")
    private static Constructor<? extends WorkerVerticle<?, ?>> constructor(String name) {
        Class<?> type;
        try {
            type = Class.forName(name, false, Thread.currentThread().getContextClassLoader());
        } catch (ClassNotFoundException | LinkageError e) {
            throw new IllegalArgumentException("verticle class '" + name + "' cannot be loaded: " + e);
        }
        if (!WorkerVerticle.class.isAssignableFrom(type)) {
            throw new IllegalArgumentException(name + " is not a " + WorkerVerticle.class.getName() + ", whose ranks"
                    + " can share a JVM; deploy it one process per rank (without --ranks-as-threads)");
        }
        try {
            return (Constructor<? extends WorkerVerticle<?, ?>>) type.getConstructor(Promise.class, PrintStream.class,
                    Map.class);
        } catch (NoSuchMethodException e) {
            throw new IllegalArgumentException(name + " has no public constructor (Promise done, PrintStream out, Map"
                    + " env), through which a rank thread gives it its environment");
        }
    }

    /** The {@code -conf} of {@code args}, JSON text or the path of a JSON file; an empty config without one. */
    static JsonObject config(List<String> args) {
        if (args.isEmpty()) {
            return new JsonObject();
        }
        if (args.size() != 2 || !List.of("-conf", "--conf").contains(args.getFirst())) {
            throw new IllegalArgumentException("after the verticle only '-conf JSON' is taken, got " + args);
        }
        String conf = args.get(1).trim();
        try {
            return new JsonObject(conf.startsWith("{") ? conf : Files.readString(Path.of(conf)));
        } catch (IOException | RuntimeException e) {
            throw new IllegalArgumentException("-conf " + conf + " is neither a JSON object nor a readable JSON file: "
                    + e.getMessage());
        }
    }

    private static <R> WorkerVerticle<?, R> construct(Constructor<? extends WorkerVerticle<?, ?>> make, Promise<R> done,
            Console console) {
        try {
            @SuppressWarnings("unchecked")
            WorkerVerticle<?, R> verticle = (WorkerVerticle<?, R>) make.newInstance(done, console.out(), console.env());
            return verticle;
        } catch (InvocationTargetException e) {
            throw new IllegalStateException(make.getDeclaringClass().getName() + " failed to construct: "
                    + e.getCause(), e.getCause());
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException("cannot construct " + make.getDeclaringClass().getName() + ": " + e, e);
        }
    }
}
