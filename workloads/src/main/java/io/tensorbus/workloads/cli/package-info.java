/**
 * The {@code tensorbus} command line: {@code info}, {@code launch} (torchrun's job), {@code run}, {@code bench}
 * and {@code secret}.
 *
 * <p>Threads: the launcher runs on {@code main} and watches its child processes; nothing here runs on an event
 * loop.
 */
package io.tensorbus.workloads.cli;
