/**
 * The RPC wire format: frame layout, headers and the parser that cuts a connection's bytes into frames and
 * copies tensor attachments straight into their memory. Not an API.
 *
 * <p>Threads: a parser belongs to one connection and runs on its event loop.
 */
package io.tensorbus.distributed.rpc.impl;
