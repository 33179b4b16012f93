package io.tensorbus.workloads.ps;

import io.tensorbus.distributed.rpc.RRef;
import io.tensorbus.distributed.rpc.RpcAgent;
import io.tensorbus.distributed.rpc.RpcRegistry;
import io.tensorbus.nn.models.MnistNet;
import io.tensorbus.tensor.Generator;
import io.tensorbus.tensor.Tensor;
import io.tensorbus.workloads.demo.TrainingLoop;
import java.io.PrintStream;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.NavigableSet;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;

/**
 * The parameter server of PyTorch's parameter-server RPC tutorial: it holds the tutorial network, runs its
 * forward pass for the trainers ({@value #FORWARD}: the output comes back recorded in the caller's
 * distributed autograd context, so the trainers' backward passes reach the parameters here) and hands out
 * RRefs of the parameters ({@value #PARAMETERS}) for their {@code DistributedOptimizer}s. The trainers report
 * each epoch ({@value #EPOCH_DONE}); when all have, the server prints the epoch's line.
 *
 * <p>The trainers take turns, in rank order: a step's forward pass waits until the trainer before has said
 * its step is done ({@value #STEP_DONE}); a trainer that finished ({@value #TRAINER_DONE}) leaves the round.
 * Without turns, one trainer's optimizer step (which changes the parameters in place) could land between
 * another's forward and backward pass, and that backward pass would use changed weights; autograd refuses it,
 * as PyTorch's does. A fixed order also makes a run repeatable: the same seed gives the same network. The
 * server computes every forward and backward pass, so turns cost the trainers only their own share of a step
 * (the loss and the data).
 */
final class ParameterServer {
    /** {@code forward(trainerRank, images)}: in the trainer's turn, the network's log-probabilities for a batch. */
    static final String FORWARD = "ps.forward";

    /** {@code parameters()}: RRefs of the network's parameters, owned by the server. */
    static final String PARAMETERS = "ps.parameters";

    /** {@code stepDone(trainerRank)}: the trainer whose turn it was is done with its step. */
    static final String STEP_DONE = "ps.stepDone";

    /** {@code trainerDone(trainerRank)}: the trainer takes no more turns. */
    static final String TRAINER_DONE = "ps.trainerDone";

    /** {@code epochDone(epoch, lossSum, batches, samples)}: a trainer's report of one epoch. */
    static final String EPOCH_DONE = "ps.epochDone";

    private final MnistNet model;
    private final Duration turnDeadline;
    /** The trainers still training, by rank; the turn goes round them in this order. */
    private final NavigableSet<Integer> round = new TreeSet<>();
    private int turn = 1;
    private final int trainers;
    private final int epochs;
    private final PrintStream out;
    private final Map<Integer, double[]> totals = new HashMap<>();
    private final List<RRef<Tensor>> parameterRefs = new ArrayList<>();
    private long epochStart = System.nanoTime();
    private double[] lastEpoch = {Double.NaN, 0};

    /**
     * A server for {@code trainers} trainers of {@code epochs} epochs.
     *
     * @param turnDeadline how long a trainer waits for its turn before its forward call fails
     * @param out where the epoch lines go
     */
    ParameterServer(long seed, int trainers, int epochs, Duration turnDeadline, PrintStream out) {
        this.turnDeadline = turnDeadline;
        for (int rank = 1; rank <= trainers; rank++) {
            round.add(rank);
        }
        this.model = new MnistNet(new Generator(seed));
        this.trainers = trainers;
        this.epochs = epochs;
        this.out = out;
    }

    /** The functions the server serves. */
    RpcRegistry registry() {
        return new RpcRegistry()
                .register(FORWARD, a -> forward(rank(a.get(0)), (Tensor) a.get(1)))
                .register(STEP_DONE, a -> {
                    stepDone(rank(a.get(0)));
                    return null;
                })
                .register(TRAINER_DONE, a -> {
                    trainerDone(rank(a.get(0)));
                    return null;
                })
                .register(PARAMETERS, a -> parameters(RpcAgent.current()))
                .register(EPOCH_DONE, a -> {
                    epochDone(((Number) a.get(0)).intValue(), ((Number) a.get(1)).doubleValue(),
                            ((Number) a.get(2)).longValue(), ((Number) a.get(3)).longValue());
                    return null;
                });
    }

    /** The trained network (read it once the trainers are done). */
    MnistNet model() {
        return model;
    }

    /** The mean loss and the images per second of the last epoch all trainers finished. */
    synchronized double[] lastEpoch() {
        return lastEpoch.clone();
    }

    /** Starts the clock of the first epoch: the trainers have just been told to start. */
    synchronized void start() {
        epochStart = System.nanoTime();
    }

    /** Waits for the turn of the trainer of rank {@code trainer}, then runs the forward pass. */
    private Tensor forward(int trainer, Tensor images) throws InterruptedException {
        awaitTurn(trainer);
        return model.forward(images);
    }

    private synchronized void awaitTurn(int trainer) throws InterruptedException {
        if (!round.contains(trainer)) {
            throw new IllegalArgumentException("rank " + trainer + " is not a trainer still training: " + round);
        }
        long deadline = System.nanoTime() + turnDeadline.toNanos();
        while (turn != trainer) {
            long left = deadline - System.nanoTime();
            if (left <= 0) {
                throw new IllegalStateException(ParameterServerWorker.workerName(trainer) + " waited more than "
                        + turnDeadline.toSeconds() + " s for its turn; "
                        + ParameterServerWorker.workerName(turn) + " did not finish its step");
            }
            TimeUnit.NANOSECONDS.timedWait(this, left);
        }
    }

    /** Ends the turn of {@code trainer}, if it had it (a forward call that failed may not have). */
    private synchronized void stepDone(int trainer) {
        if (turn == trainer) {
            passTurn();
        }
    }

    /** Takes {@code trainer} out of the round. */
    private synchronized void trainerDone(int trainer) {
        if (round.remove(trainer) && turn == trainer) {
            passTurn();
        }
    }

    private void passTurn() {
        Integer next = round.higher(turn);
        turn = next != null ? next : round.isEmpty() ? 0 : round.first();
        notifyAll();
    }

    private static int rank(Object o) {
        if (o instanceof Integer rank) {
            return rank;
        }
        throw new IllegalArgumentException("a trainer's rank is an int, got " + o);
    }

    /** The same references for every trainer: the server's own handles, closed by {@link #releaseParameters}. */
    private synchronized List<RRef<Tensor>> parameters(RpcAgent agent) {
        if (parameterRefs.isEmpty()) {
            model.parameters().forEach(p -> parameterRefs.add(RRef.of(agent, p)));
        }
        return List.copyOf(parameterRefs);
    }

    /** Closes the server's handles of the parameters, once no trainer asks for them any more. */
    synchronized void releaseParameters() {
        parameterRefs.forEach(RRef::close);
        parameterRefs.clear();
    }

    private synchronized void epochDone(int epoch, double lossSum, long batches, long samples) {
        if (epoch < 1 || epoch > epochs) {
            throw new IllegalArgumentException("epoch " + epoch + " is not in [1, " + epochs + "]");
        }
        double[] t = totals.computeIfAbsent(epoch, e -> new double[4]);
        t[0] += lossSum;
        t[1] += batches;
        t[2] += samples;
        if (++t[3] < trainers) {
            return;
        }
        totals.remove(epoch);
        double seconds = (System.nanoTime() - epochStart) / 1e9;
        epochStart = System.nanoTime();
        lastEpoch = new double[] {t[0] / Math.max(1, t[1]), t[2] / Math.max(1e-9, seconds)};
        out.println(TrainingLoop.epochLine(epoch, epochs, lastEpoch[0], seconds, lastEpoch[1]));
        out.flush();
    }
}
