package io.tensorbus.workloads.ddp;

import io.vertx.core.json.JsonObject;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The workload's --comm-hook options and config fields. */
class CommHookChoiceTest {

    @Test
    void hookOptionsAreParsedAndDefaultToAllReduce() {
        CommHookChoice c = CommHookChoice.parse(List.of("--comm-hook", "powersgd", "--powersgd-rank", "2",
                "--powersgd-start", "40"));
        assertEquals(new CommHookChoice("powersgd", 2, 40), c);
        assertEquals(CommHookChoice.allReduce(), CommHookChoice.parse(List.of()));
    }

    @Test
    void theConfigCarriesTheChoiceToEveryRank() {
        CommHookChoice c = new CommHookChoice("powersgd", 3, 25);
        JsonObject config = c.toJson().put("worldSize", 1);
        assertEquals(c, DdpConfig.fromJson(config, Map.of()).commHook());
        assertEquals(CommHookChoice.allReduce(), DdpConfig.fromJson(new JsonObject(), Map.of()).commHook());
    }

    @Test
    void badHooksRanksAndStartsAreRefused() {
        var unknown = assertThrows(IllegalArgumentException.class,
                () -> CommHookChoice.parse(List.of("--comm-hook", "gossip")));
        assertTrue(unknown.getMessage().contains("[allreduce, fp16, bf16, powersgd]"), unknown.getMessage());
        assertThrows(IllegalArgumentException.class,
                () -> CommHookChoice.parse(List.of("--powersgd-rank", "0")));
        assertThrows(IllegalArgumentException.class,
                () -> CommHookChoice.parse(List.of("--powersgd-start", "1")));
        assertThrows(IllegalArgumentException.class,
                () -> CommHookChoice.parse(List.of("--powersgd-start", "x")));
        assertThrows(IllegalArgumentException.class,
                () -> CommHookChoice.parse(List.of("--comm-hook")));
    }
}
