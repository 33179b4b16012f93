package io.tensorbus.it;

import io.tensorbus.distributed.Distributed;
import io.tensorbus.distributed.InitOptions;
import io.tensorbus.distributed.ProcessGroup;
import io.tensorbus.spi.DType;
import io.tensorbus.tensor.Tensor;
import io.vertx.core.Future;

import java.time.Duration;

/**
 * One rank of the failure scenarios of {@link PeerFailureTest}, initialised from {@code env://} with the group
 * timeout {@code TENSORBUS_CHECK_TIMEOUT_S} (seconds) and the group name {@code TENSORBUS_CHECK_GROUP}. Modes (the first argument):
 * <ul>
 *   <li>{@code init}: create the group, run one small allReduce, print {@code INIT OK} and exit 0; when the
 *       group cannot be created print {@code INIT FAILED <exception>} and exit 2;</li>
 *   <li>{@code peer-loss VICTIM}: after a warm-up allReduce, every rank runs several 64 MiB allReduces,
 *       printing {@code STARTED allReduce k} before each; rank VICTIM halts its JVM ({@code Runtime.halt(9)},
 *       no shutdown hooks, sockets dropped by the OS) a moment after starting the first. The survivors print
 *       {@code FAILED <exception class>: <message>} and exit 3, or {@code UNEXPECTED OK} and exit 0.</li>
 * </ul>
 */
public final class FaultCheck {
    /** The exit status of a rank whose group could not be created. */
    static final int INIT_FAILED = 2;
    /** The exit status of a survivor whose collective failed. */
    static final int OP_FAILED = 3;
    /** The exit status of the rank that halts itself. */
    static final int HALTED = 9;

    private FaultCheck() {
    }

    public static void main(String[] args) {
        Duration timeout = Duration.ofSeconds(Vals.envInt("TENSORBUS_CHECK_TIMEOUT_S", 20));
        String mode = args.length > 0 ? args[0] : "init";
        ProcessGroup pg;
        try {
            pg = Vals.await(Distributed.initProcessGroup(InitOptions.builder().timeout(timeout)
                    .groupName(System.getenv().getOrDefault("TENSORBUS_CHECK_GROUP", "default")).build()),
                    timeout.plusSeconds(10), "initProcessGroup");
            Tensor t = Tensor.full(pg.rank() + 1, DType.FLOAT32, 8);
            Vals.await(pg.allReduce(t), timeout.plusSeconds(5), "warm-up allReduce");
            System.out.println("INIT OK rank " + pg.rank() + " of " + pg.size() + " sum=" + t.getDouble(0));
        } catch (Throwable e) {
            System.out.println("INIT FAILED " + e);
            e.printStackTrace();
            System.out.flush();
            System.exit(INIT_FAILED);
            return;
        }
        int code = 0;
        if (mode.equals("peer-loss")) {
            code = peerLoss(pg, Integer.parseInt(args[1]), timeout);
        }
        try {
            Vals.await(pg.destroy(), Duration.ofSeconds(10), "destroy");
        } catch (RuntimeException e) {
            System.err.println("destroy failed: " + e);
        }
        System.out.flush();
        System.exit(code);
    }

    private static int peerLoss(ProcessGroup pg, int victim, Duration timeout) {
        Tensor big = Tensor.full(1, DType.FLOAT32, CollectivesCheck.BIG);
        for (int k = 1; k <= 4; k++) {
            System.out.println("STARTED allReduce " + k);
            System.out.flush();
            Future<Void> f = pg.allReduce(big);
            if (pg.rank() == victim) {
                // In the middle of the first allReduce: the others are sending to and expecting data from us.
                try {
                    Thread.sleep(30);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
                System.out.println("HALTING");
                System.out.flush();
                Runtime.getRuntime().halt(HALTED);
            }
            try {
                Vals.await(f, timeout.plusSeconds(5), "allReduce " + k);
            } catch (Throwable e) {
                System.out.println("FAILED " + e.getClass().getName() + ": " + e.getMessage());
                e.printStackTrace();
                return OP_FAILED;
            }
        }
        System.out.println("UNEXPECTED OK: four 64 MiB allReduces finished although rank " + victim + " halted");
        return 0;
    }
}
