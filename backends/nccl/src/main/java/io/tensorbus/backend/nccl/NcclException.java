package io.tensorbus.backend.nccl;

/** A call into NCCL that returned an error: the call, the {@code ncclResult_t} and NCCL's own message. */
final class NcclException extends RuntimeException {
    private final int result;

    NcclException(String call, int result, String message) {
        super(call + " failed with " + NcclConstants.resultName(result) + (message == null || message.isBlank() ? ""
                : ": " + message));
        this.result = result;
    }

    /** The {@code ncclResult_t}. */
    int result() {
        return result;
    }
}
