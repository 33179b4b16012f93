/**
 * Sample third-party backend plugins, found only through {@link java.util.ServiceLoader}: {@code traced}, a
 * decorator that counts the calls to the backend it wraps, and {@code unavailable-sample}, a provider whose
 * device is missing. They live in the module's main source set (registered in its
 * {@code META-INF/services/io.tensorbus.spi.BackendProvider}) and use the SPI only, as a plugin jar would.
 *
 * <p>Threads: {@code traced} calls the wrapped backend on the caller's thread and counts with atomics.
 */
package io.tensorbus.it.sample;
