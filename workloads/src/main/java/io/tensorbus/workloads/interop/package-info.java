/**
 * Workloads in which JVM ranks and PyTorch ranks are one job over the {@code gloo} backend: a JVM evaluator of a
 * PyTorch trainer's weights ({@code tensorbus run pytorch-evaluator}, with examples/pytorch/trainer.py) and a JVM
 * rank that feeds a PyTorch trainer its batches ({@code tensorbus run pytorch-feeder}, with
 * examples/pytorch/consumer.py).
 */
package io.tensorbus.workloads.interop;
