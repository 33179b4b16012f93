/**
 * The benchmark suites of {@code tensorbus bench}, one line per measurement in the keys the PyTorch anchors
 * print.
 *
 * <p>Threads: measurements run on {@code main} (and, for the distributed suites, on one JVM per rank).
 */
package io.tensorbus.workloads.bench;
