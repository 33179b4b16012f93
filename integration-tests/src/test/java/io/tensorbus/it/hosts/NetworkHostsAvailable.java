package io.tensorbus.it.hosts;

import org.junit.jupiter.api.extension.ConditionEvaluationResult;
import org.junit.jupiter.api.extension.ExecutionCondition;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * Runs a test class only where {@link NetworkHosts} can be made (root and {@code ip}); elsewhere it is skipped
 * with the reason, which is also printed as {@code [tensorbus] ... skipped: ...}.
 */
public final class NetworkHostsAvailable implements ExecutionCondition {
    @Override
    public ConditionEvaluationResult evaluateExecutionCondition(ExtensionContext context) {
        String why = NetworkHosts.unavailableReason();
        if (why == null) {
            return ConditionEvaluationResult.enabled("network namespaces can be made here");
        }
        String message = context.getDisplayName() + " skipped: " + why;
        System.err.println("[tensorbus] " + message);
        return ConditionEvaluationResult.disabled(message);
    }
}
