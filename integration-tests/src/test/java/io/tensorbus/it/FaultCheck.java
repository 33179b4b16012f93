package io.tensorbus.it;

import io.tensorbus.DType;
import io.tensorbus.Device;
import io.tensorbus.distributed.Distributed;
import io.tensorbus.distributed.InitOptions;
import io.tensorbus.distributed.ProcessGroup;
import io.tensorbus.internal.tensor.TensorInternals;
import io.tensorbus.nn.Functional;
import io.tensorbus.nn.models.MnistNet;
import io.tensorbus.optim.SGD;
import io.tensorbus.parallel.DistributedDataParallel;
import io.tensorbus.tensor.Generator;
import io.tensorbus.tensor.Tensor;
import io.vertx.core.Future;
import java.time.Duration;

/**
 * One rank of the failure scenarios of {@link PeerFailureTest}, initialised from {@code env://} with the group
 * timeout {@code TENSORBUS_CHECK_TIMEOUT_S} (seconds), the group name {@code TENSORBUS_CHECK_GROUP}, the backend
 * {@code TENSORBUS_CHECK_BACKEND} (default tcp) and the tensors' device {@code TENSORBUS_CHECK_DEVICE} (default cpu).
 * Modes (the first argument):
 * <ul>
 *   <li>{@code init}: create the group, run one small allReduce, print {@code INIT OK} and exit 0; when the
 *       group cannot be created print {@code INIT FAILED <exception>} and exit 2;</li>
 *   <li>{@code peer-loss VICTIM}: after a warm-up allReduce, every rank runs several 64 MiB allReduces,
 *       printing {@code STARTED allReduce k} before each; rank VICTIM halts its JVM ({@code Runtime.halt(9)},
 *       no shutdown hooks, sockets dropped by the OS) a moment after starting the first. The survivors print
 *       {@code FAILED <exception class>: <message>} and exit 3, or {@code UNEXPECTED OK} and exit 0.</li>
 *   <li>{@code ddp-peer-loss VICTIM}: DistributedDataParallel training of the tutorial network, printing
 *       {@code STEP k} before each step; rank VICTIM halts inside the backward pass of step 3, once its
 *       gradient of {@code fc1.weight} is ready. The survivors print {@code FAILED ...} and exit 3.</li>
 * </ul>
 */
public final class FaultCheck {
    /** Where the tensors of {@code init} and {@code peer-loss} live: {@code TENSORBUS_CHECK_DEVICE}, default cpu. */
    private static final Device DEVICE = Device.parse(System.getenv().getOrDefault("TENSORBUS_CHECK_DEVICE", "cpu"));

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
                    .backend(System.getenv().getOrDefault("TENSORBUS_CHECK_BACKEND", "tcp"))
                    .groupName(System.getenv().getOrDefault("TENSORBUS_CHECK_GROUP", "default")).build()),
                    timeout.plusSeconds(10), "initProcessGroup");
            Tensor t = Tensor.full(pg.rank() + 1, DType.FLOAT32, DEVICE, 8);
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
        } else if (mode.equals("ddp-peer-loss")) {
            code = ddpPeerLoss(pg, Integer.parseInt(args[1]));
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
        Tensor big = Tensor.full(1, DType.FLOAT32, DEVICE, CollectivesCheck.BIG);
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

    private static int ddpPeerLoss(ProcessGroup pg, int victim) {
        DistributedDataParallel ddp = DistributedDataParallel.builder(new MnistNet(new Generator(1)), pg)
                .bucketCapMb(0.01).build();
        SGD sgd = SGD.builder().lr(0.01).momentum(0.5).build(ddp.parameters());
        int[] step = {0};
        if (pg.rank() == victim) {
            Tensor fc1 = ddp.module().namedParameters().get("fc1.weight");
            TensorInternals.gradAccumulator(fc1).registerPostHook((in, out) -> {
                if (step[0] == 3) {
                    System.out.println("HALTING");
                    System.out.flush();
                    Runtime.getRuntime().halt(HALTED);
                }
            });
        }
        Tensor x = Tensor.randn(new Generator(pg.rank()), DType.FLOAT32, 32, 1, 28, 28);
        Tensor y = Tensor.of(new long[32], 32);
        try {
            for (step[0] = 1; step[0] <= 6; step[0]++) {
                System.out.println("STEP " + step[0]);
                System.out.flush();
                sgd.zeroGrad();
                Functional.nllLoss(ddp.forward(x), y).backward();
                sgd.step();
            }
        } catch (Throwable e) {
            System.out.println("FAILED " + e.getClass().getName() + ": " + e.getMessage());
            e.printStackTrace();
            return OP_FAILED;
        }
        System.out.println("UNEXPECTED OK: six DDP steps finished although rank " + victim + " halted");
        return 0;
    }
}
