package io.tensorbus.workloads.ddp;

import io.tensorbus.distributed.algorithms.CommHook;
import io.tensorbus.distributed.algorithms.CommHooks;
import io.tensorbus.distributed.algorithms.PowerSGDState;
import io.tensorbus.workloads.cli.Cli;
import io.vertx.core.json.JsonObject;
import java.util.List;
import java.util.Locale;
import picocli.CommandLine.Option;

/**
 * Which DDP communication hook the Fashion-MNIST workload registers: {@code allreduce} (DDP's default),
 * {@code fp16} or {@code bf16} compression, or {@code powersgd} with its rank and first compressed step
 * ({@code --comm-hook powersgd --powersgd-rank 1 --powersgd-start 50}; config fields {@code commHook},
 * {@code powerSgdRank}, {@code powerSgdStart}).
 *
 * @param name {@code allreduce}, {@code fp16}, {@code bf16} or {@code powersgd}
 * @param powerSgdRank PowerSGD's {@code matrixApproximationRank}, at least 1
 * @param powerSgdStart PowerSGD's {@code startPowerSGDIter}, at least 2 (error feedback and warm start are on)
 */
public record CommHookChoice(String name, int powerSgdRank, long powerSgdStart) {
    /** The hooks by name. */
    public static final List<String> NAMES = List.of("allreduce", "fp16", "bf16", "powersgd");

    /**
     * @throws IllegalArgumentException for an unknown hook, a rank below 1 or a start below 2
     */
    public CommHookChoice {
        if (!NAMES.contains(name)) {
            throw new IllegalArgumentException("comm hook '" + name + "': the workload knows " + NAMES);
        }
        if (powerSgdRank < 1 || powerSgdStart < 2) {
            throw new IllegalArgumentException("PowerSGD needs a rank >= 1 and a start step >= 2, got rank "
                    + powerSgdRank + " and start " + powerSgdStart);
        }
    }

    /** DDP's default all-reduce. */
    public static CommHookChoice allReduce() {
        return new CommHookChoice("allreduce", 1, 10);
    }

    /**
     * Parses {@code --comm-hook NAME --powersgd-rank R --powersgd-start STEP}, each optional.
     *
     * @throws IllegalArgumentException for an unknown option or a missing or bad value
     */
    public static CommHookChoice parse(List<String> args) {
        return Cli.parse(new Flags(), args).choice();
    }

    /** This record's command-line options, for a workload to mix in. */
    public static final class Flags {
        @Option(names = "--comm-hook", paramLabel = "HOOK",
                description = "DDP's communication hook: allreduce, fp16, bf16 or powersgd (default: ${DEFAULT-VALUE})")
        String name = "allreduce";
        @Option(names = "--powersgd-rank", paramLabel = "R",
                description = "PowerSGD's matrix approximation rank, at least 1 (default: ${DEFAULT-VALUE})")
        int powerSgdRank = 1;
        @Option(names = "--powersgd-start", paramLabel = "STEP",
                description = "PowerSGD's first compressed step, at least 2 (default: ${DEFAULT-VALUE})")
        long powerSgdStart = 10;

        /**
         * The choice given.
         *
         * @throws IllegalArgumentException for an unknown hook, a rank below 1 or a start below 2
         */
        public CommHookChoice choice() {
            return new CommHookChoice(name, powerSgdRank, powerSgdStart);
        }
    }

    /** The config fields of this choice. */
    public JsonObject toJson() {
        return new JsonObject().put("commHook", name).put("powerSgdRank", powerSgdRank)
                .put("powerSgdStart", powerSgdStart);
    }

    /**
     * The hook, and for PowerSGD its state (whose compression statistics the workload reports).
     *
     * @return the hook, with the PowerSGD state or null
     */
    Registered create() {
        return switch (name) {
            case "fp16" -> new Registered(CommHooks.fp16Compress(), null);
            case "bf16" -> new Registered(CommHooks.bf16Compress(), null);
            case "powersgd" -> {
                PowerSGDState state = PowerSGDState.builder().matrixApproximationRank(powerSgdRank)
                        .startPowerSGDIter(powerSgdStart).build();
                yield new Registered(CommHooks.powerSGD(state), state);
            }
            default -> new Registered(CommHooks.allReduce(), null);
        };
    }

    /** A line saying what the hook sent, for rank 0's output. */
    String report(Registered registered, long gradientElements) {
        if (registered.powerSgd() == null) {
            return String.format(Locale.ROOT, "comm hook %s: %d gradient elements per step", name, gradientElements);
        }
        PowerSGDState.CompressionStats s = registered.powerSgd().compressionStats();
        long compressedSteps = Math.max(1, registered.powerSgd().iteration() - powerSgdStart);
        return String.format(Locale.ROOT, "comm hook powersgd rank %d from step %d: %d of %d gradient elements per"
                + " compressed step (rate %.1f), %d steps compressed", powerSgdRank, powerSgdStart,
                s.numelAfter() / compressedSteps, gradientElements, s.rate(),
                Math.max(0, registered.powerSgd().iteration() - powerSgdStart));
    }

    /** A hook and, for PowerSGD, its state. */
    record Registered(CommHook hook, PowerSGDState powerSgd) {
    }
}
