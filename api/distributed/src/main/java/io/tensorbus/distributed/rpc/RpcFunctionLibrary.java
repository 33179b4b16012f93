package io.tensorbus.distributed.rpc;

/**
 * Functions a library built on RPC makes callable on every worker that has the library on its class path, as
 * Python lets a worker call any function it can import: the distributed optimizer's local optimizers, say. Every
 * {@link RpcRegistry} registers the libraries {@link java.util.ServiceLoader} finds ({@code META-INF/services/
 * io.tensorbus.distributed.rpc.RpcFunctionLibrary}) when it is made; functions a user registers later under the
 * same name replace them.
 */
public interface RpcFunctionLibrary {
    /**
     * Registers the library's functions in {@code registry}, under names of its own (a prefix naming the library).
     *
     * @throws IllegalArgumentException as {@link RpcRegistry#register} for a bad name
     */
    void registerInto(RpcRegistry registry);
}
