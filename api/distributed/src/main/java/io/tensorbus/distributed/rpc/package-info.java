/**
 * Remote procedure calls and remote references, as {@code torch.distributed.rpc}: {@link
 * io.tensorbus.distributed.rpc.Rpc#init}, {@link io.tensorbus.distributed.rpc.RpcAgent} ({@code rpcSync},
 * {@code rpcAsync}, {@code remote}), {@link io.tensorbus.distributed.rpc.RRef}, the
 * {@link io.tensorbus.distributed.rpc.RpcRegistry} of callable functions and the options. The design is in
 * {@code docs/rpc-design.md}.
 *
 * <p>Threads: calls are made from any thread and return futures at once. Each connection parses its frames on
 * its Vert.x event loop (asserted, as Netty's {@code inEventLoop()}); a called function runs on a virtual thread
 * of the callee's agent, or on that event loop when it was registered with
 * {@link io.tensorbus.distributed.rpc.RpcRegistry#registerOnEventLoop} (and must not block), and the caller's
 * future completes on the connection's event loop. The agent's shared tables are concurrent maps, safe from any of
 * these threads.
 */
package io.tensorbus.distributed.rpc;
