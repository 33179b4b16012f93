package io.tensorbus.optim;

import static io.tensorbus.optim.OptimTesting.assertSame;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.tensorbus.DType;
import io.tensorbus.internal.io.Json;
import io.tensorbus.io.TensorFormatException;
import io.tensorbus.tensor.Generator;
import io.tensorbus.tensor.Tensor;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/** State dicts, gradient handling, parameter groups and argument checks of the optimizers. */
class OptimizerBehaviorTest {
    private static List<Tensor> params(long seed) {
        Generator g = new Generator(seed);
        return List.of(Tensor.randn(g, DType.FLOAT32, 3, 4).requiresGrad(true),
                Tensor.randn(g, DType.FLOAT32, 5).requiresGrad(true));
    }

    private static List<List<Tensor>> grads(int steps) {
        Generator g = new Generator(99);
        List<List<Tensor>> out = new ArrayList<>();
        for (int s = 0; s < steps; s++) {
            out.add(List.of(Tensor.randn(g, DType.FLOAT32, 3, 4), Tensor.randn(g, DType.FLOAT32, 5)));
        }
        return out;
    }

    private static void run(Optimizer opt, List<Tensor> params, List<List<Tensor>> grads, int from, int to) {
        for (int s = from; s < to; s++) {
            for (int i = 0; i < params.size(); i++) {
                params.get(i).setGrad(grads.get(s).get(i).clone());
            }
            opt.step();
        }
    }

    static Stream<Function<List<Tensor>, Optimizer>> optimizers() {
        return Stream.of(
                p -> SGD.builder().lr(0.1).momentum(0.9).dampening(0.1).build(p),
                p -> SGD.builder().lr(0.1).momentum(0.9).nesterov(true).build(p),
                p -> Adam.builder().lr(0.01).amsgrad(true).build(p),
                p -> AdamW.builder().lr(0.01).weightDecay(0.1).build(p),
                p -> Adagrad.builder().lr(0.1).lrDecay(0.01).initialAccumulatorValue(0.1).build(p));
    }

    // ---------------------------------------------------------------- state dict

    @ParameterizedTest
    @MethodSource("optimizers")
    void stateDictRoundTripContinuesLikeAnUninterruptedRun(Function<List<Tensor>, Optimizer> make)
            throws TensorFormatException {
        List<List<Tensor>> grads = grads(5);
        List<Tensor> straight = params(1);
        Optimizer a = make.apply(straight);
        run(a, straight, grads, 0, 5);

        List<Tensor> first = params(1);
        Optimizer b = make.apply(first);
        run(b, first, grads, 0, 3);
        OptimizerState saved = b.stateDict();
        // Through the flat form a later issue saves (safetensors + JSON), JSON text included.
        List<Map<String, Object>> groups = reparse(saved.paramGroups());
        OptimizerState reloaded = OptimizerState.fromFlat(saved.toTensorMap(), groups);

        List<Tensor> resumed = new ArrayList<>();
        for (Tensor p : first) {
            resumed.add(p.detach().clone().requiresGrad(true));
        }
        Optimizer c = make.apply(resumed);
        c.loadStateDict(reloaded);
        run(c, resumed, grads, 3, 5);
        for (int i = 0; i < straight.size(); i++) {
            assertSame(straight.get(i), resumed.get(i), a.getClass().getSimpleName() + " param " + i);
        }
    }

    @SuppressWarnings("unchecked")
    private static List<Map<String, Object>> reparse(List<Map<String, Object>> groups)
            throws TensorFormatException {
        return (List<Map<String, Object>>) Json.parse(Json.write(groups), "groups");
    }

    @Test
    void stateDictHasPyTorchKeysAndIndices() {
        List<Tensor> p = params(2);
        Optimizer opt = Adam.builder().amsgrad(true).buildGroups(List.of(ParamGroup.of(p.get(0)),
                ParamGroup.of(p.get(1)).lr(0.5)));
        run(opt, p, grads(1), 0, 1);
        OptimizerState sd = opt.stateDict();
        assertEquals(List.of("state.0.step", "state.0.exp_avg", "state.0.exp_avg_sq", "state.0.max_exp_avg_sq",
                "state.1.step", "state.1.exp_avg", "state.1.exp_avg_sq", "state.1.max_exp_avg_sq"),
                List.copyOf(sd.toTensorMap().keySet()));
        assertEquals(List.of(0), sd.paramGroups().get(0).get("params"));
        assertEquals(List.of(1), sd.paramGroups().get(1).get("params"));
        assertEquals(0.5, sd.paramGroups().get(1).get("lr"));
        assertEquals(List.of(0.9, 0.999), sd.paramGroups().get(0).get("betas"));
        assertEquals(1.0, sd.state().get(0).get("step").item());
        assertEquals(0, sd.state().get(0).get("step").dim());
    }

    @Test
    void stateDictIsASnapshot() {
        List<Tensor> p = params(3);
        Optimizer opt = SGD.builder().lr(0.1).momentum(0.9).build(p);
        run(opt, p, grads(2), 0, 1);
        Tensor saved = opt.stateDict().state().get(0).get(SGD.MOMENTUM_BUFFER);
        Tensor before = saved.clone();
        run(opt, p, grads(2), 1, 2);
        assertSame(before, saved, "snapshot after another step");
    }

    @Test
    void loadStateDictRestoresGroupOptions() {
        List<Tensor> p = params(4);
        Optimizer a = SGD.builder().lr(0.3).momentum(0.5).build(p);
        Optimizer b = SGD.builder().lr(0.1).build(params(4));
        b.loadStateDict(a.stateDict());
        assertEquals(0.3, b.paramGroups().get(0).lr());
        assertEquals(0.5, b.paramGroups().get(0).getDouble(ParamGroup.MOMENTUM));
    }

    @Test
    void loadStateDictRejectsADifferentGroupCount() {
        List<Tensor> p = params(5);
        Optimizer two = Adam.builder().buildGroups(List.of(ParamGroup.of(p.get(0)), ParamGroup.of(p.get(1))));
        Optimizer one = new Adam(params(5));
        assertMessage(() -> one.loadStateDict(two.stateDict()), "has 2 parameter groups but this optimizer has 1");
    }

    @Test
    void loadStateDictRejectsADifferentParameterCount() {
        Optimizer two = new Adam(params(6));
        Optimizer one = new Adam(List.of(params(6).get(0)));
        assertMessage(() -> one.loadStateDict(two.stateDict()),
                "parameter group 0 of the loaded state dict has 2 parameters but this optimizer's group 0 has 1");
    }

    @Test
    void loadStateDictRejectsADifferentShapeAndChangesNothing() {
        List<Tensor> p = params(7);
        Optimizer saved = new Adam(p);
        run(saved, p, grads(1), 0, 1);
        List<Tensor> swapped = List.of(Tensor.zeros(5).requiresGrad(true), Tensor.zeros(3, 4).requiresGrad(true));
        Optimizer target = Adam.builder().lr(0.5).build(swapped);
        assertMessage(() -> target.loadStateDict(saved.stateDict()),
                "state.0.exp_avg has shape [3, 4] but parameter 0 has shape [5]");
        assertTrue(target.state(swapped.get(0)).isEmpty());
        assertEquals(0.5, target.paramGroups().get(0).lr());
    }

    @Test
    void loadStateDictRejectsStateForAnUnlistedIndex() {
        Optimizer opt = new Adam(params(8));
        OptimizerState bad = new OptimizerState(Map.of(7, Map.of("step", Tensor.scalar(1.0, DType.FLOAT32))),
                opt.stateDict().paramGroups());
        assertMessage(() -> opt.loadStateDict(bad), "state for parameter index 7");
    }

    @Test
    void fromFlatRejectsMalformedKeys() {
        assertMessage(() -> OptimizerState.fromFlat(Map.of("state.x.step", Tensor.scalar(1.0)), List.of()),
                "not of the form state.<index>.<name>");
        assertMessage(() -> OptimizerState.fromFlat(Map.of("momentum", Tensor.scalar(1.0)), List.of()),
                "not of the form state.<index>.<name>");
    }

    @Test
    void stateDictGroupsNeedParams() {
        assertMessage(() -> new OptimizerState(Map.of(), List.of(Map.of("lr", 0.1))), "has no 'params' list");
    }

    // ---------------------------------------------------------------- gradients

    @Test
    void zeroGradKeepsZeroedTensorsByDefault() {
        List<Tensor> p = params(9);
        Optimizer opt = new SGD(p, 0.1);
        Tensor g = Tensor.ones(3, 4);
        p.get(0).setGrad(g);
        opt.zeroGrad();
        assertTrue(p.get(0).grad() == g, "the same tensor, zeroed in place");
        assertSame(Tensor.zeros(3, 4), g, "zeroed gradient");
        assertNull(p.get(1).grad());
    }

    @Test
    void zeroGradTrueDropsTheGradients() {
        List<Tensor> p = params(10);
        Optimizer opt = new SGD(p, 0.1);
        p.get(0).setGrad(Tensor.ones(3, 4));
        p.get(1).setGrad(Tensor.ones(5));
        opt.zeroGrad(true);
        assertNull(p.get(0).grad());
        assertNull(p.get(1).grad());
    }

    @Test
    void zeroGradDetachesAGradientWithHistory() {
        List<Tensor> p = params(11);
        Optimizer opt = new SGD(p, 0.1);
        Tensor leaf = Tensor.ones(5).requiresGrad(true);
        p.get(1).setGrad(leaf.mul(2.0));
        opt.zeroGrad(false);
        assertNull(p.get(1).grad().gradFn());
        assertSame(Tensor.zeros(5), p.get(1).grad(), "zeroed");
    }

    @ParameterizedTest
    @MethodSource("optimizers")
    void paramsWithoutGradAreSkipped(Function<List<Tensor>, Optimizer> make) {
        List<Tensor> p = params(12);
        Tensor before = p.get(1).detach().clone();
        Optimizer opt = make.apply(p);
        p.get(0).setGrad(Tensor.ones(3, 4));
        opt.step();
        assertSame(before, p.get(1), "untouched parameter");
        Map<String, Tensor> s = opt.state(p.get(1));
        assertTrue(s.isEmpty() || s.get("step").item() == 0.0, "no state advanced: " + s.keySet());
    }

    @Test
    void stepRecordsNoHistory() {
        List<Tensor> p = params(13);
        Optimizer opt = Adam.builder().build(p);
        p.get(0).setGrad(Tensor.ones(3, 4));
        opt.step();
        assertTrue(p.get(0).isLeaf());
        assertNull(opt.state(p.get(0)).get("exp_avg").gradFn());
    }

    @Test
    void maximizeWalksUphill() {
        Tensor p = Tensor.zeros(2).requiresGrad(true);
        Optimizer opt = SGD.builder().lr(0.5).maximize(true).build(List.of(p));
        p.setGrad(Tensor.of(new float[] {1, -2}, 2));
        opt.step();
        assertSame(Tensor.of(new float[] {0.5f, -1f}, 2), p, "p + lr * grad");
    }

    // ---------------------------------------------------------------- groups

    @Test
    void groupsUseTheirOwnLearningRate() {
        Tensor a = Tensor.zeros(2).requiresGrad(true);
        Tensor b = Tensor.zeros(2).requiresGrad(true);
        Optimizer opt = SGD.builder().lr(0.1).buildGroups(List.of(ParamGroup.of(a), ParamGroup.of(b).lr(0.01)));
        a.setGrad(Tensor.ones(2));
        b.setGrad(Tensor.ones(2));
        opt.step();
        assertEquals(-0.1, a.getDouble(0), 1e-7);
        assertEquals(-0.01, b.getDouble(0), 1e-7);
        assertEquals(0.1, opt.paramGroups().get(0).lr());
        assertEquals(0.0, opt.paramGroups().get(1).getDouble(ParamGroup.MOMENTUM), "filled from the defaults");
    }

    @Test
    void addParamGroupTakesDefaultsAndChecksOverlap() {
        List<Tensor> p = params(14);
        Optimizer opt = Adagrad.builder().initialAccumulatorValue(0.5).build(List.of(p.get(0)));
        opt.addParamGroup(ParamGroup.of(p.get(1)).set(ParamGroup.LR_DECAY, 0.1));
        assertEquals(2, opt.paramGroups().size());
        assertEquals(0.01, opt.paramGroups().get(1).lr());
        assertSame(Tensor.full(0.5, DType.FLOAT32, 5), opt.state(p.get(1)).get(Adagrad.SUM), "Adagrad sum");
        assertMessage(() -> opt.addParamGroup(ParamGroup.of(p.get(0))), "more than one parameter group");
    }

    @Test
    void sgdGroupsMustGiveLrWhenTheBuilderDoesNot() {
        Tensor a = Tensor.zeros(2).requiresGrad(true);
        assertMessage(() -> SGD.builder().build(List.of(a)), "required optimization parameter lr");
        Optimizer ok = SGD.builder().buildGroups(List.of(ParamGroup.of(a).lr(0.2)));
        assertEquals(0.2, ok.paramGroups().get(0).lr());
    }

    @Test
    void emptyParameterListIsRefused() {
        assertMessage(() -> new Adam(List.of()), "empty parameter list");
        assertMessage(() -> SGD.builder().lr(0.1).buildGroups(List.of()), "empty parameter list");
    }

    @Test
    void nonLeafParameterIsRefused() {
        Tensor leaf = Tensor.ones(2).requiresGrad(true);
        assertMessage(() -> new SGD(List.of(leaf.mul(2.0)), 0.1), "can't optimize a non-leaf tensor");
    }

    @Test
    void duplicateParameterIsRefused() {
        Tensor a = Tensor.ones(2).requiresGrad(true);
        assertMessage(() -> new SGD(List.of(a, a), 0.1), "appears twice");
    }

    @Test
    void unknownOptionIsRefused() {
        Tensor a = Tensor.ones(2).requiresGrad(true);
        assertMessage(() -> Adam.builder().buildGroups(List.of(ParamGroup.of(a).set("momentum", 0.9))),
                "unknown option 'momentum'");
    }

    @Test
    void optionOfTheWrongTypeIsRefused() {
        Tensor a = Tensor.ones(2).requiresGrad(true);
        assertMessage(() -> Adam.builder().buildGroups(List.of(ParamGroup.of(a).set(ParamGroup.AMSGRAD, 1.0))),
                "option amsgrad must be a boolean");
        assertMessage(() -> ParamGroup.of(a).set(ParamGroup.LR, "fast"), "must be a number, a boolean or a list");
        assertMessage(() -> ParamGroup.of(a).set(ParamGroup.LR, Double.NaN), "must be a finite number");
    }

    // ---------------------------------------------------------------- argument checks, one per validation

    private static final List<Tensor> P = List.of(Tensor.zeros(2).requiresGrad(true));

    @Test
    void sgdNegativeLr() {
        assertMessage(() -> new SGD(P, -0.1), "Invalid learning rate: -0.1 (lr must be >= 0)");
    }

    @Test
    void sgdNegativeMomentum() {
        assertMessage(() -> SGD.builder().lr(0.1).momentum(-0.5).build(P), "Invalid momentum value: -0.5");
    }

    @Test
    void sgdNegativeWeightDecay() {
        assertMessage(() -> SGD.builder().lr(0.1).weightDecay(-1).build(P), "Invalid weight_decay value: -1.0");
    }

    @Test
    void sgdNesterovWithoutMomentum() {
        assertMessage(() -> SGD.builder().lr(0.1).nesterov(true).build(P),
                "Nesterov momentum requires a momentum and zero dampening");
    }

    @Test
    void sgdNesterovWithDampening() {
        assertMessage(() -> SGD.builder().lr(0.1).momentum(0.9).dampening(0.1).nesterov(true).build(P),
                "Nesterov momentum requires a momentum and zero dampening");
    }

    @Test
    void sgdGroupOverrideIsCheckedToo() {
        assertMessage(() -> SGD.builder().lr(0.1).buildGroups(List.of(ParamGroup.of(P).lr(-1))),
                "Invalid learning rate: -1.0");
    }

    @Test
    void adamNegativeLr() {
        assertMessage(() -> Adam.builder().lr(-1e-3).build(P), "Invalid learning rate: -0.001");
    }

    @Test
    void adamNegativeEps() {
        assertMessage(() -> Adam.builder().eps(-1e-8).build(P), "Invalid epsilon value: -1.0E-8 (eps must be >= 0)");
    }

    @Test
    void adamBeta1OutOfRange() {
        assertMessage(() -> Adam.builder().betas(1.0, 0.999).build(P),
                "Invalid beta parameter at index 0: 1.0 (betas must be in [0, 1))");
    }

    @Test
    void adamBeta2OutOfRange() {
        assertMessage(() -> Adam.builder().betas(0.9, -0.1).build(P), "Invalid beta parameter at index 1: -0.1");
    }

    @Test
    void adamNegativeWeightDecay() {
        assertMessage(() -> Adam.builder().weightDecay(-0.1).build(P), "Invalid weight_decay value: -0.1");
    }

    @Test
    void adamWChecksLikeAdam() {
        assertMessage(() -> AdamW.builder().lr(-1).build(P), "Invalid learning rate");
        assertMessage(() -> AdamW.builder().betas(0.9, 1.5).build(P), "Invalid beta parameter at index 1: 1.5");
        assertMessage(() -> AdamW.builder().eps(-1).build(P), "Invalid epsilon value");
        assertMessage(() -> AdamW.builder().weightDecay(-1).build(P), "Invalid weight_decay value");
    }

    @Test
    void adagradNegativeLr() {
        assertMessage(() -> Adagrad.builder().lr(-0.01).build(P), "Invalid learning rate: -0.01");
    }

    @Test
    void adagradNegativeLrDecay() {
        assertMessage(() -> Adagrad.builder().lrDecay(-0.1).build(P), "Invalid lr_decay value: -0.1");
    }

    @Test
    void adagradNegativeWeightDecay() {
        assertMessage(() -> Adagrad.builder().weightDecay(-0.1).build(P), "Invalid weight_decay value: -0.1");
    }

    @Test
    void adagradNegativeInitialAccumulator() {
        assertMessage(() -> Adagrad.builder().initialAccumulatorValue(-1).build(P),
                "Invalid initial_accumulator_value value: -1.0");
    }

    @Test
    void adagradNegativeEps() {
        assertMessage(() -> Adagrad.builder().eps(-1).build(P), "Invalid epsilon value: -1.0");
    }

    @Test
    void defaultsAreTorchDefaults() {
        assertEquals(Map.of("lr", 1e-3, "betas", List.of(0.9, 0.999), "eps", 1e-8, "weight_decay", 0.0,
                "amsgrad", false, "maximize", false), new Adam(P).defaults());
        assertEquals(1e-2, new AdamW(P).defaults().get("weight_decay"));
        assertEquals(Map.of("lr", 1e-2, "lr_decay", 0.0, "weight_decay", 0.0, "initial_accumulator_value", 0.0,
                "eps", 1e-10, "maximize", false), new Adagrad(P).defaults());
        assertEquals(Map.of("lr", 0.1, "momentum", 0.0, "dampening", 0.0, "weight_decay", 0.0, "nesterov", false,
                "maximize", false), new SGD(P, 0.1).defaults());
    }

    private static void assertMessage(Executable call, String part) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, call);
        assertTrue(e.getMessage().contains(part), "message: " + e.getMessage());
    }
}
