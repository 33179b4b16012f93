package io.tensorbus.io;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.tensorbus.internal.io.Json;
import java.math.BigInteger;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class JsonTest {

    @Test
    void parsesEveryKindOfValue() throws Exception {
        Object v = Json.parse(" {\"a\": [1, -2.5, 3e2, true, false, null], \"b\": {\"c\": \"d\"}, \"e\": []} ", "t");
        Map<String, Object> expected = new LinkedHashMap<>();
        expected.put("a", Arrays.asList(1L, -2.5, 300.0, true, false, null));
        expected.put("b", Map.of("c", "d"));
        expected.put("e", List.of());
        assertEquals(expected, v);
    }

    @Test
    void keepsMemberOrder() throws Exception {
        Map<?, ?> m = (Map<?, ?>) Json.parse("{\"z\":1,\"a\":2,\"m\":3}", "t");
        assertEquals(List.of("z", "a", "m"), List.copyOf(m.keySet()));
    }

    @Test
    void decodesEscapesAndSurrogatePairs() throws Exception {
        assertEquals("\"\\/\b\f\n\r\t\u00e9\uD83D\uDE00",
                Json.parse("\"\\\"\\\\\\/\\b\\f\\n\\r\\t\\u00e9\\ud83d\\uDE00\"", "t"));
    }

    @Test
    void readsIntegersBeyondLongAsBigInteger() throws Exception {
        assertEquals(new BigInteger("18446744073709551615"), Json.parse("18446744073709551615", "t"));
        assertEquals(Long.MIN_VALUE, Json.parse("-9223372036854775808", "t"));
    }

    @ParameterizedTest
    @ValueSource(strings = {"", "{", "[1,]", "{\"a\":1,}", "{'a':1}", "01", "-", "1.", "1e", "NaN", "+1",
        "[1 2]", "{\"a\" 1}", "{1:2}", "\"abc", "tru", "// c\n1", "\"\\x\"", "\"\\u12g4\"", "1 2", "\"\t\"",
        "\"\\ud800\"", "\"\\udc00x\""})
    void rejectsInvalidJson(String text) {
        TensorFormatException e = assertThrows(TensorFormatException.class, () -> Json.parse(text, "h.json"));
        assertTrue(e.getMessage().startsWith("h.json: invalid JSON at offset "), e.getMessage());
    }

    @Test
    void errorNamesOffsetLineAndColumn() {
        TensorFormatException e = assertThrows(TensorFormatException.class,
                () -> Json.parse("{\n  \"a\": 1,\n  \"b\" x\n}", "f"));
        assertEquals("f: invalid JSON at offset 18 (line 3, column 7): expected ':', found 'x'", e.getMessage());
    }

    @Test
    void rejectsDuplicateMemberNames() {
        TensorFormatException e = assertThrows(TensorFormatException.class,
                () -> Json.parse("{\"a\":1,\"a\":2}", null));
        assertTrue(e.getMessage().contains("duplicate member name \"a\""), e.getMessage());
    }

    @Test
    void rejectsNestingBeyondTheLimit() throws Exception {
        String ok = "[".repeat(64) + "]".repeat(64);
        Json.parse(ok, "t");
        TensorFormatException e = assertThrows(TensorFormatException.class,
                () -> Json.parse("[".repeat(65) + "]".repeat(65), "t"));
        assertTrue(e.getMessage().contains("nesting deeper than 64"), e.getMessage());
        assertThrows(TensorFormatException.class, () -> Json.parse("[".repeat(100_000), "t"));
    }

    @Test
    void writesCompactJsonThatParsesBack() throws Exception {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("s", "q\"\\\n\u0001é");
        m.put("n", Arrays.asList(1L, 2.5, null, true));
        m.put("o", Map.of());
        String text = Json.write(m);
        assertEquals("{\"s\":\"q\\\"\\\\\\n\\u0001é\",\"n\":[1,2.5,null,true],\"o\":{}}", text);
        assertEquals(m, Json.parse(text, "t"));
    }

    @Test
    void writerRefusesUnsupportedValues() {
        assertThrows(IllegalArgumentException.class, () -> Json.write(Double.NaN));
        assertThrows(IllegalArgumentException.class, () -> Json.write(new Object()));
        assertThrows(IllegalArgumentException.class, () -> Json.write(Map.of(1, 2)));
    }

    @Test
    void parsesNullLiteral() throws Exception {
        assertNull(Json.parse(" null ", "t"));
    }
}
