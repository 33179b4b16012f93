package io.tensorbus.backend.nccl;

import io.tensorbus.DType;
import io.tensorbus.Device;
import io.tensorbus.spi.Backend;
import io.tensorbus.spi.BackendOptions;
import io.tensorbus.spi.BackendProvider;
import io.tensorbus.spi.DeviceBuffer;
import io.vertx.core.Future;
import java.util.Map;

/**
 * The {@code nccl} backend: collectives over CUDA memory through NCCL, bound with the FFM API. Discovery loads
 * nothing; {@link #isAvailable()} needs the CUDA runtime with a device ({@link CudaRuntimeProvider}) and
 * {@code libnccl.so.2} ({@link LibraryPath#NCCL}), which it loads once, and says which is missing.
 *
 * <p>Each rank uses one device, chosen as PyTorch users place their ranks: the property {@value #DEVICE_PROPERTY}
 * when set, else the launcher's {@code LOCAL_RANK}, else the group rank, modulo the devices here. NCCL refuses
 * two ranks of one communicator on one device, so a group needs as many devices as it has ranks on a machine.
 */
public final class NcclBackendProvider implements BackendProvider {
    /** The backend's name. */
    public static final String NAME = "nccl";
    /** The backend property that names this rank's CUDA device index. */
    public static final String DEVICE_PROPERTY = "nccl.device";

    /** The library of this JVM, or why there is none; looked for on first use. */
    private static final class Loaded {
        static final NcclLibrary LIBRARY;
        static final Throwable CAUSE;

        static {
            NcclLibrary library = null;
            Throwable cause = null;
            LibraryPath.Result found = LibraryPath.NCCL.find();
            if (found.path().isEmpty()) {
                cause = new IllegalStateException(LibraryPath.NCCL.missing(found));
            } else {
                try {
                    library = new NcclLibrary(found.path().get());
                } catch (RuntimeException e) {
                    cause = new IllegalStateException("loading " + found.path().get() + " failed: " + e.getMessage(),
                            e);
                }
            }
            LIBRARY = library;
            CAUSE = cause;
        }
    }

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public boolean isAvailable() {
        return unavailabilityCause() == null;
    }

    /** Why the backend cannot run here: no CUDA device, or no NCCL library; null when it can. */
    @Override
    public Throwable unavailabilityCause() {
        CudaRuntimeProvider cuda = new CudaRuntimeProvider();
        if (!cuda.isAvailable()) {
            return new IllegalStateException("no CUDA device to run NCCL on: " + cuda.unavailabilityCause().getMessage()
                    + (Loaded.CAUSE == null ? "" : "; and " + Loaded.CAUSE.getMessage()), cuda.unavailabilityCause());
        }
        return Loaded.CAUSE;
    }

    /**
     * Joins the group's NCCL communicator on this rank's device: the unique id travels through the group's store,
     * and the group fails after its timeout when a rank never joins.
     */
    @Override
    public Future<Backend> create(BackendOptions options) {
        Throwable cause = unavailabilityCause();
        if (cause != null) {
            return Future.failedFuture(new IllegalStateException("backend 'nccl' is not available on this machine: "
                    + cause.getMessage(), cause));
        }
        CudaRuntime runtime = CudaRuntimeProvider.get();
        DeviceBuffer barrier;
        CudaDevice device;
        try {
            int index = deviceIndex(options, System.getenv(), runtime.devices().size());
            device = runtime.device(new Device(CudaRuntimeProvider.TYPE, index));
            barrier = runtime.allocate(device.device(), DType.FLOAT32, 1);
        } catch (RuntimeException e) {
            return Future.failedFuture(e);
        }
        return NcclRendezvous.connect(options, Loaded.LIBRARY, device, barrier).<Backend>map(b -> b)
                .onFailure(t -> runtime.release(barrier));
    }

    /**
     * This rank's device index: {@value #DEVICE_PROPERTY}, else {@code LOCAL_RANK}, else the group rank, modulo
     * {@code devices}.
     *
     * @throws IllegalArgumentException when the property or {@code LOCAL_RANK} is not a non-negative integer, or
     *         the property names a device that is not here
     */
    static int deviceIndex(BackendOptions options, Map<String, String> env, int devices) {
        String named = options.property(DEVICE_PROPERTY, null);
        if (named != null) {
            int i = parse(named, DEVICE_PROPERTY);
            if (i >= devices) {
                throw new IllegalArgumentException(DEVICE_PROPERTY + "=" + i + " but this machine has " + devices
                        + " CUDA device(s): cuda:0 to cuda:" + (devices - 1));
            }
            return i;
        }
        String local = env.get("LOCAL_RANK");
        int rank = local != null ? parse(local, "LOCAL_RANK") : options.rank();
        return rank % devices;
    }

    private static int parse(String value, String what) {
        try {
            int i = Integer.parseInt(value.trim());
            if (i >= 0) {
                return i;
            }
        } catch (NumberFormatException e) {
            // reported below
        }
        throw new IllegalArgumentException(what + "='" + value + "' is not a device index (0, 1, ...)");
    }
}
