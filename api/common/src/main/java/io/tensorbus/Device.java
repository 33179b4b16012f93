package io.tensorbus;

import java.util.Objects;

/**
 * Where a tensor's storage lives: {@code cpu}, or an accelerator such as {@code cuda:0} or {@code opencl:1}.
 *
 * <p>The type is a plain value ({@code type} and {@code index}) so that device plugins can add their own
 * device types without changing this class; {@link #parse(String)} accepts PyTorch's spelling.
 */
public record Device(String type, int index) {

    /** The host CPU, where tensors live unless a device runtime moves them. */
    public static final Device CPU = new Device("cpu", -1);

    /**
     * Checks the type name and the index.
     *
     * @throws IllegalArgumentException for an empty type, a type with characters other than lower-case
     *     letters and digits, or an index below -1
     */
    public Device {
        Objects.requireNonNull(type, "type");
        if (type.isEmpty() || !type.chars().allMatch(c -> (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'))) {
            throw new IllegalArgumentException("device type '" + type
                    + "' must be non-empty lower-case letters and digits, such as cpu, cuda, opencl");
        }
        if (index < -1) {
            throw new IllegalArgumentException("device index " + index + " must be >= 0, or -1 for none");
        }
    }

    /** A CUDA device by ordinal. */
    public static Device cuda(int index) {
        return new Device("cuda", index);
    }

    /** An OpenCL device by ordinal. */
    public static Device opencl(int index) {
        return new Device("opencl", index);
    }

    /**
     * Parses {@code cpu}, {@code cuda}, {@code cuda:1}, {@code opencl:0}.
     *
     * @throws IllegalArgumentException when the text is not {@code type} or {@code type:index}
     */
    public static Device parse(String text) {
        Objects.requireNonNull(text, "text");
        int colon = text.indexOf(':');
        if (colon < 0) {
            return text.equals("cpu") ? CPU : new Device(text, -1);
        }
        String idx = text.substring(colon + 1);
        try {
            return new Device(text.substring(0, colon), Integer.parseInt(idx));
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("device '" + text + "': index '" + idx
                    + "' is not a number; expected type or type:index, such as cuda:0", e);
        }
    }

    /** True for the host CPU. */
    public boolean isCpu() {
        return type.equals("cpu");
    }

    @Override
    public String toString() {
        return index < 0 ? type : type + ":" + index;
    }
}
