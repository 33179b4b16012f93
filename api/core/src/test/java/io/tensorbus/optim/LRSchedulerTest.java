package io.tensorbus.optim;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.tensorbus.tensor.Tensor;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;

/**
 * StepLR and CosineAnnealingLR learning rates over 20 steps against PyTorch 1.13 (lr_schedulers.json, written
 * by tools/make_optim_data.py: an SGD with groups at lr 0.1 and 0.05; get_last_lr() after construction and
 * after each optimizer.step(); scheduler.step() pair).
 */
class LRSchedulerTest {
    private static SGD twoGroups() {
        return SGD.builder().lr(0.1).buildGroups(List.of(ParamGroup.of(Tensor.zeros(2).requiresGrad(true)),
                ParamGroup.of(Tensor.zeros(3).requiresGrad(true)).lr(0.05)));
    }

    @SuppressWarnings("unchecked")
    private static void assertSequence(String key, Function<Optimizer, LRScheduler> make) {
        Map<String, Object> root = (Map<String, Object>) OptimTesting.json("lr_schedulers.json");
        List<Object> expected = (List<Object>) ((Map<String, Object>) root.get(key)).get("lrs");
        SGD opt = twoGroups();
        LRScheduler sched = make.apply(opt);
        for (int s = 0; s < expected.size(); s++) {
            if (s > 0) {
                opt.step();
                sched.step();
            }
            List<Object> lrs = (List<Object>) expected.get(s);
            for (int g = 0; g < lrs.size(); g++) {
                double want = ((Number) lrs.get(g)).doubleValue();
                double got = sched.getLastLr().get(g);
                assertEquals(want, got, 1e-12 * Math.abs(want) + 1e-15, key + " step " + s + " group " + g);
                assertEquals(got, opt.paramGroups().get(g).lr(), 0.0, "the group's lr is the scheduled one");
            }
        }
        assertEquals(expected.size() - 1, sched.lastEpoch());
    }

    @Test
    void stepLrMatchesPyTorch() {
        assertSequence("step_lr", o -> new StepLR(o, 3, 0.5));
    }

    @Test
    void cosineAnnealingMatchesPyTorchThroughTheRestart() {
        assertSequence("cosine", o -> new CosineAnnealingLR(o, 7, 0.001));
    }

    @Test
    void cosineAnnealingWithZeroMinimumMatchesPyTorch() {
        assertSequence("cosine_zero_min", o -> new CosineAnnealingLR(o, 4, 0.0));
    }

    @Test
    void freshScheduleRecordsInitialLr() {
        SGD opt = twoGroups();
        new StepLR(opt, 2, 0.1);
        assertEquals(0.1, opt.paramGroups().get(0).getDouble(ParamGroup.INITIAL_LR));
        assertEquals(0.05, opt.paramGroups().get(1).getDouble(ParamGroup.INITIAL_LR));
    }

    @Test
    void resumedScheduleContinuesFromInitialLr() {
        SGD opt = twoGroups();
        StepLR first = new StepLR(opt, 2, 0.5);
        for (int i = 0; i < 3; i++) {
            first.step();
        }
        StepLR resumed = new StepLR(opt, 2, 0.5, first.lastEpoch());
        assertEquals(4, resumed.lastEpoch());
        assertEquals(0.025, resumed.getLastLr().get(0), 1e-15);
    }

    @Test
    void resumingWithoutInitialLrIsRefused() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> new CosineAnnealingLR(twoGroups(), 5, 0.0, 3));
        assertTrue(e.getMessage().contains("initial_lr"), e.getMessage());
    }

    @Test
    void badStepSizeIsRefused() {
        assertMessage(() -> new StepLR(twoGroups(), 0, 0.1), "stepSize must be at least 1");
    }

    @Test
    void badGammaIsRefused() {
        assertMessage(() -> new StepLR(twoGroups(), 3, -0.5), "gamma must be a finite factor greater than 0");
        assertMessage(() -> new StepLR(twoGroups(), 3, Double.NaN), "gamma must be a finite factor greater than 0");
    }

    @Test
    void badTMaxIsRefused() {
        assertMessage(() -> new CosineAnnealingLR(twoGroups(), 0, 0.0), "tMax must be at least 1");
    }

    @Test
    void badEtaMinIsRefused() {
        assertMessage(() -> new CosineAnnealingLR(twoGroups(), 5, -1e-3), "etaMin must be a finite learning rate >= 0");
    }

    @Test
    void badLastEpochIsRefused() {
        assertMessage(() -> new StepLR(twoGroups(), 3, 0.1, -2), "lastEpoch must be -1");
    }

    @Test
    void refusedArgumentsLeaveTheGroupsAlone() {
        SGD opt = twoGroups();
        assertThrows(IllegalArgumentException.class, () -> new StepLR(opt, 0, 0.1));
        assertTrue(!opt.paramGroups().get(0).has(ParamGroup.INITIAL_LR));
    }

    private static void assertMessage(Executable call, String part) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, call);
        assertTrue(e.getMessage().contains(part), e.getMessage());
    }
}
