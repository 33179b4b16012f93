package io.tensorbus.backend.tcp;


/**
 * Cuts a region into near-equal, element-aligned parts: the segments of a ring and the chunks a pipeline
 * streams. Parts may be empty when there are more parts than elements.
 */
final class Chunks {
    private Chunks() {
    }

    /** Part {@code i} of {@code parts} of {@code region}, whose elements are {@code elementBytes} wide. */
    static Region part(Region region, int elementBytes, int parts, int i) {
        long n = region.byteSize() / elementBytes;
        long base = n / parts;
        long extra = n % parts;
        long start = i * base + Math.min(i, extra);
        long len = base + (i < extra ? 1 : 0);
        return region.slice(start * elementBytes, len * elementBytes);
    }

    /** How many chunks of at most {@code chunkBytes} (at least one) a region of {@code bytes} needs. */
    static int count(long bytes, long chunkBytes) {
        return (int) Math.max(1, (bytes + chunkBytes - 1) / chunkBytes);
    }
}
