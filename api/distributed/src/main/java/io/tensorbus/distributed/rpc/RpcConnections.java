package io.tensorbus.distributed.rpc;

/** Where the connections callers opened to this worker report in: what an incoming connection needs of its agent. */
interface RpcConnections {
    /** {@code connection} proved its caller: an older connection of that caller is superseded. */
    void welcomed(RpcIncoming connection);

    /** {@code connection} closed. */
    void closed(RpcIncoming connection);
}
