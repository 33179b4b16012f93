package io.tensorbus.workloads.ps;

import io.tensorbus.data.DataLoader;
import io.tensorbus.data.FashionMnist;
import io.tensorbus.distributed.autograd.DistAutograd;
import io.tensorbus.distributed.optim.DistributedOptimizer;
import io.tensorbus.distributed.optim.OptimizerSpec;
import io.tensorbus.distributed.rpc.RRef;
import io.tensorbus.distributed.rpc.RpcAgent;
import io.tensorbus.distributed.rpc.RpcRegistry;
import io.tensorbus.nn.Functional;
import io.tensorbus.parallel.DistributedSampler;
import io.tensorbus.tensor.Tensor;
import io.tensorbus.workloads.demo.FashionMnistTraining;
import io.tensorbus.workloads.demo.TrainingLoop;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import java.io.IOException;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.util.List;

/**
 * A trainer of PyTorch's parameter-server RPC tutorial: when the server calls {@value #TRAIN} it takes RRefs of
 * the server's parameters, builds a {@link DistributedOptimizer} over them and trains on its share of every
 * epoch. Each step opens a distributed autograd context, runs the network's forward pass on the server, takes
 * the loss here, runs the distributed backward pass (which reaches the parameters on the server) and steps
 * the optimizer with that context's gradients.
 */
final class Trainer {
    /** {@code train()}: trains every epoch; returns once the last one is reported. */
    static final String TRAIN = "ps.train";

    private final FashionMnistTraining.Options options;
    private final int index;
    private final int trainers;
    private final PrintStream progress;
    private final Promise<TrainingLoop.EpochStats> done = Promise.promise();

    /**
     * Trainer {@code index} (0-based) of {@code trainers}.
     *
     * @param progress where the progress bar goes, or null for none
     */
    Trainer(FashionMnistTraining.Options options, int index, int trainers, PrintStream progress) {
        this.options = options;
        this.index = index;
        this.trainers = trainers;
        this.progress = progress;
    }

    /** The function the server calls. */
    RpcRegistry registry() {
        return new RpcRegistry().register(TRAIN, a -> {
            try {
                TrainingLoop.EpochStats last = train(RpcAgent.current());
                done.complete(last);
                return null;
            } catch (RuntimeException e) {
                done.fail(e);
                throw e;
            }
        });
    }

    /** Completes with the last epoch's statistics once training ended, or with why it failed. */
    Future<TrainingLoop.EpochStats> done() {
        return done.future();
    }

    private TrainingLoop.EpochStats train(RpcAgent agent) {
        FashionMnist data;
        try {
            data = options.dataset(true);
        } catch (IOException e) {
            throw new UncheckedIOException("trainer " + (index + 1) + " cannot read the training data", e);
        }
        DistributedSampler sampler = DistributedSampler.builder(data).numReplicas(trainers).rank(index)
                .seed(options.seed()).build();
        int perTrainer = options.batchSize() / trainers;
        DataLoader<?> loader = DataLoader.builder(data).batchSize(perTrainer).sampler(sampler).build();
        int batches = TrainingLoop.batchesPerEpoch(loader.size(), options.trainLimit(), perTrainer * trainers);
        List<RRef<Tensor>> params = agent.rpcSync(ParameterServerWorker.SERVER, ParameterServer.PARAMETERS);
        try (DistributedOptimizer optimizer = DistributedOptimizer.create(agent,
                OptimizerSpec.sgd(options.lr()).with("momentum", options.momentum()), params)) {
            TrainingLoop.EpochStats stats = null;
            for (int epoch = 1; epoch <= options.epochs(); epoch++) {
                loader.setEpoch(epoch - 1);
                stats = TrainingLoop.epoch(batch -> step(agent, optimizer, batch.inputs(), batch.targets()), loader,
                        batches, epoch, options.epochs(), progress);
                agent.rpcSync(ParameterServerWorker.SERVER, ParameterServer.EPOCH_DONE, epoch, stats.lossSum(),
                        stats.batches(), stats.samples());
            }
            agent.rpcSync(ParameterServerWorker.SERVER, ParameterServer.TRAINER_DONE, agent.self().id());
            return stats;
        } catch (RuntimeException e) {
            tell(agent, ParameterServer.TRAINER_DONE, e);
            throw e;
        } finally {
            params.forEach(RRef::close);
        }
    }

    /**
     * One step in this trainer's turn on the server: forward there, loss here, distributed backward, optimizer
     * step; returns the loss.
     */
    private double step(RpcAgent agent, DistributedOptimizer optimizer, Tensor images, Tensor labels) {
        DistAutograd dist = agent.distAutograd();
        double loss;
        try (DistAutograd.Context context = dist.context()) {
            Tensor output = agent.rpcSync(ParameterServerWorker.SERVER, ParameterServer.FORWARD, agent.self().id(),
                    images);
            Tensor l = Functional.nllLoss(output, labels);
            dist.backward(context.id(), List.of(l));
            optimizer.step(context.id());
            loss = l.item();
        } catch (RuntimeException e) {
            tell(agent, ParameterServer.STEP_DONE, e);
            throw e;
        }
        agent.rpcSync(ParameterServerWorker.SERVER, ParameterServer.STEP_DONE, agent.self().id());
        return loss;
    }

    /** Tells the server {@code function} after {@code failure}, to which a failure to tell it is added. */
    private static void tell(RpcAgent agent, String function, RuntimeException failure) {
        try {
            agent.rpcSync(ParameterServerWorker.SERVER, function, agent.self().id());
        } catch (RuntimeException e) {
            failure.addSuppressed(e);
        }
    }
}
