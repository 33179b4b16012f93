/**
 * Workloads in which JVM ranks and PyTorch ranks are one job over the {@code gloo} backend: a JVM evaluator of a
 * PyTorch trainer's weights ({@code tensorbus run pytorch-evaluator}, with examples/pytorch/trainer.py) and a JVM
 * rank that feeds a PyTorch trainer its batches ({@code tensorbus run pytorch-feeder}, with
 * examples/pytorch/consumer.py).
 *
 * <p>Threads: each workload runs on the command's thread, blocking on its group's futures as the Python side blocks
 * on its calls; the group's traffic runs on the gloo backend's event loop.
 */
package io.tensorbus.workloads.interop;
