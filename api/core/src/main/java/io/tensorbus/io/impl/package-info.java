/**
 * Internals of {@link io.tensorbus.io}: a strict JSON codec, header parsers and encoders, byte sources,
 * element decoding and layout conversion. Not an API: it may change in any release.
 *
 * <p>Threads: the calling thread.
 */
package io.tensorbus.io.impl;
