package io.tensorbus.backend.gloo;

import io.tensorbus.spi.Backend;
import io.tensorbus.spi.BackendOptions;
import io.tensorbus.spi.BackendProvider;
import io.vertx.core.Future;

/**
 * The {@code gloo} backend: collectives and point-to-point messages on gloo's TCP transport, byte for byte as
 * PyTorch's {@code ProcessGroupGloo} sends them (gloo of PyTorch 1.13, as Debian's {@code python3-torch} carries),
 * so that JVM ranks and Python ranks can be one group. It rendezvous through the group's store under PyTorch's keys
 * ({@code 0/rank_<r>}, {@code 0/<r>}) and runs gloo's own algorithms: ring all-reduce, ring reduce, binomial
 * broadcast, ring all-gather, direct gather and scatter, dissemination barrier. gloo's connections carry no
 * authentication: the job secret is not proven on them. Settings from {@link BackendOptions#properties()}:
 * {@code gloo.bindHost} (else {@code tcp.bindHost}, default {@code 127.0.0.1}) and {@code gloo.advertiseHost} (else
 * {@code tcp.advertiseHost}, default the bind host).
 */
public final class GlooBackendProvider implements BackendProvider {
    /** The name users select this backend by, as in PyTorch. */
    public static final String NAME = "gloo";

    /** Creates the provider; {@link java.util.ServiceLoader} calls this. */
    public GlooBackendProvider() {
    }

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public boolean isAvailable() {
        return true;
    }

    @Override
    public Throwable unavailabilityCause() {
        return null;
    }

    @Override
    public Future<Backend> create(BackendOptions options) {
        if (options == null) {
            throw new NullPointerException("options");
        }
        return GlooRendezvous.connect(options).map(context -> new GlooBackend(context, options));
    }
}
