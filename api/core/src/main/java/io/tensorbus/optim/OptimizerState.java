package io.tensorbus.optim;

import io.tensorbus.tensor.Tensor;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;

/**
 * An optimizer's state dict, in PyTorch's structure: {@code state} maps a parameter's index (its position
 * counting over all groups in order) to its named state tensors ({@code momentum_buffer}, {@code step},
 * {@code exp_avg}, {@code exp_avg_sq}, {@code max_exp_avg_sq}, {@code sum}); {@code paramGroups} holds each
 * group's options by PyTorch name plus {@code params}, the list of its parameters' indices.
 *
 * <p>For saving, {@link #toTensorMap()} flattens the tensors to keys such as {@code state.0.exp_avg} (for a
 * safetensors file) and {@link #paramGroups()} is JSON-able as it is (numbers, booleans, lists);
 * {@link #fromFlat} rebuilds the state from those two parts.
 *
 * @param state per-parameter state tensors by parameter index (copied into an unmodifiable, sorted map)
 * @param paramGroups per-group options and {@code params} index lists (copied; numbers become Double,
 *     indices Integer)
 */
public record OptimizerState(Map<Integer, Map<String, Tensor>> state, List<Map<String, Object>> paramGroups) {
    /** The key of a group's parameter index list in {@link #paramGroups()}. */
    public static final String PARAMS = "params";
    private static final String PREFIX = "state.";

    /**
     * Copies and normalizes both parts.
     *
     * @throws IllegalArgumentException when a group lacks {@code params}, or holds a value that is not a
     *     number, boolean or list of numbers
     */
    public OptimizerState {
        Objects.requireNonNull(state, "state");
        Objects.requireNonNull(paramGroups, "paramGroups");
        Map<Integer, Map<String, Tensor>> s = new TreeMap<>();
        state.forEach((i, m) -> s.put(Objects.requireNonNull(i, "parameter index"),
                Collections.unmodifiableMap(new LinkedHashMap<>(m))));
        state = Collections.unmodifiableMap(s);
        List<Map<String, Object>> groups = new ArrayList<>();
        for (int g = 0; g < paramGroups.size(); g++) {
            groups.add(normalizeGroup(g, paramGroups.get(g)));
        }
        paramGroups = List.copyOf(groups);
    }

    /**
     * The state tensors under flat keys {@code state.<index>.<name>} (for example {@code state.0.exp_avg}),
     * in index order: what a safetensors file holds.
     */
    public Map<String, Tensor> toTensorMap() {
        Map<String, Tensor> flat = new LinkedHashMap<>();
        state.forEach((i, m) -> m.forEach((k, t) -> flat.put(PREFIX + i + "." + k, t)));
        return flat;
    }

    /** The parameter indices of group {@code g}. */
    @SuppressWarnings("unchecked")
    public List<Integer> groupParams(int g) {
        return (List<Integer>) paramGroups.get(g).get(PARAMS);
    }

    /**
     * Rebuilds a state from {@link #toTensorMap()}'s tensors and {@link #paramGroups()} (for example after
     * reading them back from safetensors and JSON).
     *
     * @throws IllegalArgumentException for a key not of the form {@code state.<index>.<name>}, or a malformed group
     */
    public static OptimizerState fromFlat(Map<String, Tensor> tensors, List<Map<String, Object>> paramGroups) {
        Map<Integer, Map<String, Tensor>> state = new TreeMap<>();
        tensors.forEach((key, t) -> {
            int dot = key.startsWith(PREFIX) ? key.indexOf('.', PREFIX.length()) : -1;
            Integer index = dot < 0 ? null : parseIndex(key.substring(PREFIX.length(), dot));
            if (index == null || dot == key.length() - 1) {
                throw new IllegalArgumentException("state key '" + key + "' is not of the form state.<index>.<name>");
            }
            state.computeIfAbsent(index, i -> new LinkedHashMap<>()).put(key.substring(dot + 1), t);
        });
        return new OptimizerState(state, paramGroups);
    }

    private static Integer parseIndex(String s) {
        try {
            int i = Integer.parseInt(s);
            return i >= 0 ? i : null;
        } catch (NumberFormatException e) {
            return null;
        }
    }

    private static Map<String, Object> normalizeGroup(int g, Map<String, Object> group) {
        Objects.requireNonNull(group, "param group " + g);
        if (!(group.get(PARAMS) instanceof List<?> params)) {
            throw new IllegalArgumentException("param group " + g + " has no 'params' list of parameter indices");
        }
        List<Integer> indices = new ArrayList<>();
        for (Object o : params) {
            if (!(o instanceof Number n) || n.doubleValue() != n.intValue() || n.intValue() < 0) {
                throw new IllegalArgumentException("param group " + g + ": 'params' must hold non-negative integer"
                        + " indices, got " + o);
            }
            indices.add(n.intValue());
        }
        Map<String, Object> out = new LinkedHashMap<>();
        group.forEach((k, v) -> out.put(k, k.equals(PARAMS) ? List.copyOf(indices) : ParamGroup.normalize(k, v)));
        return Collections.unmodifiableMap(out);
    }
}
