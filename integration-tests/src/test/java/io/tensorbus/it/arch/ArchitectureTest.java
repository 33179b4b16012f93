package io.tensorbus.it.arch;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.classes;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.tngtech.archunit.base.DescribedPredicate;
import com.tngtech.archunit.core.domain.Dependency;
import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.domain.JavaCodeUnit;
import com.tngtech.archunit.core.domain.JavaField;
import com.tngtech.archunit.core.domain.JavaMember;
import com.tngtech.archunit.core.domain.JavaModifier;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.lang.ArchCondition;
import com.tngtech.archunit.lang.ArchRule;
import com.tngtech.archunit.lang.ConditionEvents;
import com.tngtech.archunit.lang.SimpleConditionEvent;
import com.tngtech.archunit.library.dependencies.SliceAssignment;
import com.tngtech.archunit.library.dependencies.SliceIdentifier;
import io.tensorbus.tensor.archfixture.CoreClassImportingVertx;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The lines between tensorbus's artifacts and packages, checked on the compiled classes of every module
 * (production classes only; test classes and test jars are left out). {@link ArchitectureRulesTest} shows
 * that each rule reports a class that crosses its line.
 */
class ArchitectureTest {
    /** Local tensors: the core artifact and the common types. */
    static final String[] CORE = {"io.tensorbus", "io.tensorbus.tensor..", "io.tensorbus.autograd..",
            "io.tensorbus.nn..", "io.tensorbus.optim..", "io.tensorbus.data..", "io.tensorbus.io..",
            "io.tensorbus.internal.tensor..", "io.tensorbus.internal.io..", "io.tensorbus.internal.autograd.."};
    /** Everything of the api artifacts but the common types, which plugins may use. */
    static final String[] API = {"io.tensorbus.tensor..", "io.tensorbus.autograd..", "io.tensorbus.nn..",
            "io.tensorbus.optim..", "io.tensorbus.data..", "io.tensorbus.io..", "io.tensorbus.internal..",
            "io.tensorbus.distributed..", "io.tensorbus.parallel..", "io.tensorbus.mutiny..",
            "io.tensorbus.hazelcast..", "io.tensorbus.workloads.."};

    private static JavaClasses production;

    @BeforeAll
    static void importProductionClasses() {
        production = new ClassFileImporter()
                .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
                .withImportOption(location -> !location.contains("-tests.jar"))
                .importPackages("io.tensorbus");
    }

    /** The device types of the SPI, which tensors on devices use: they name no Vert.x (their futures are the JDK's). */
    static final Set<String> DEVICE_SPI = Set.of("io.tensorbus.spi.DeviceRuntimeProvider",
            "io.tensorbus.spi.DeviceRuntime", "io.tensorbus.spi.DeviceBuffer",
            "io.tensorbus.spi.DeviceBuffer$HostBuffer",
            "io.tensorbus.spi.DeviceInfo", "io.tensorbus.spi.ElementwiseOp", "io.tensorbus.spi.DeviceRuntimes",
            "io.tensorbus.spi.KernelSource", "io.tensorbus.spi.GemmOperand");

    /**
     * Core classes name no Vert.x, Netty, cluster or reactive library, nothing of the distributed layers, and of
     * the SPI only its device types.
     */
    static final ArchRule CORE_NEEDS_NO_VERTX = noClasses().that().resideInAnyPackage(CORE)
            .should().dependOnClassesThat(JavaClass.Predicates.resideInAnyPackage("io.vertx..", "io.netty..",
                    "com.hazelcast..", "io.smallrye..", "io.tensorbus.c10d..", "io.tensorbus.distributed..",
                    "io.tensorbus.parallel..", "io.tensorbus.internal.distributed..", "io.tensorbus.mutiny..",
                    "io.tensorbus.hazelcast..", "io.tensorbus.backend..", "io.tensorbus.workloads..")
                    .or(DescribedPredicate.describe("SPI types other than the device types",
                            c -> c.getPackageName().startsWith("io.tensorbus.spi")
                            && !DEVICE_SPI.contains(c.getName()))))
            .because("local tensors need no Vert.x: tensorbus-core's class path has none");

    /** The device SPI that core sees names no Vert.x, so that core's class path needs none. */
    static final ArchRule DEVICE_SPI_NEEDS_NO_VERTX = noClasses()
            .that(DescribedPredicate.describe("device SPI types", c -> DEVICE_SPI.contains(c.getName())))
            .should().dependOnClassesThat().resideInAnyPackage("io.vertx..", "io.netty..")
            .because("tensorbus-core uses these types, and its class path has no Vert.x");

    /** The SPI artifact (plugin and shared communication types) names nothing of the api above it. */
    static final ArchRule SPI_IMPORTS_NO_API = noClasses().that()
            .resideInAnyPackage("io.tensorbus.spi..", "io.tensorbus.c10d..")
            .should().dependOnClassesThat().resideInAnyPackage(concat(API, "io.tensorbus.backend.."))
            .because("a plugin author compiles against tensorbus-plugins-spi alone");

    /**
     * The plugin contract (and the c10d types it carries) names nothing of tensorbus-plugin-support: a third party
     * compiles a plugin against tensorbus-plugins-spi alone.
     */
    static final ArchRule CONTRACT_NEEDS_NO_SUPPORT = noClasses().that().resideInAnyPackage("io.tensorbus.spi..",
                    "io.tensorbus.c10d..")
            .and().resideOutsideOfPackages("io.tensorbus.spi.support..", "io.tensorbus.spi.contract..")
            .should().dependOnClassesThat().resideInAPackage("io.tensorbus.spi.support..")
            .because("tensorbus-plugins-spi is the whole contract; plugin-support is optional for plugins");

    /** The user's communication types do not lead users into the plugin package. */
    static final ArchRule USER_TYPES_NAME_NO_PLUGIN_TYPES = noClasses().that().resideInAPackage("io.tensorbus.c10d..")
            .should().dependOnClassesThat().resideInAPackage("io.tensorbus.spi..")
            .because("user code never needs to import io.tensorbus.spi");

    /** Backends, ours and the sample third party's, see only the SPI artifact. */
    static final ArchRule BACKENDS_IMPORT_NO_API = noClasses().that()
            .resideInAnyPackage("io.tensorbus.backend..", "io.tensorbus.it.sample..")
            .should().dependOnClassesThat().resideInAnyPackage(API)
            .because("backends are plugins: the api finds them by name through ServiceLoader");

    /** Process groups and RPC need neither Hazelcast nor Mutiny, nor any backend's classes. */
    static final ArchRule DISTRIBUTED_NEEDS_NO_CLUSTERING = noClasses().that()
            .resideInAnyPackage("io.tensorbus.distributed..", "io.tensorbus.parallel..",
                    "io.tensorbus.internal.distributed..")
            .should().dependOnClassesThat().resideInAnyPackage("com.hazelcast..", "io.vertx.spi.cluster..",
                    "io.smallrye..", "io.tensorbus.mutiny..", "io.tensorbus.hazelcast..", "io.tensorbus.backend..",
                    "io.tensorbus.workloads..")
            .because("tensorbus-distributed runs without tensorbus-hazelcast and tensorbus-mutiny");

    /** The examples are user code: they show only what users may import. */
    static final ArchRule EXAMPLES_USE_THE_USER_API = noClasses().that()
            .resideInAPackage("io.tensorbus.workloads.examples..")
            .should().dependOnClassesThat().resideInAnyPackage("io.tensorbus.spi..", "..impl..",
                    "io.tensorbus.internal..")
            .because("user code never imports the plugin SPI nor internals");

    /**
     * An {@code impl} package belongs to its parent package: only classes of the parent and its subpackages
     * use it. Internals shared across packages live under {@code io.tensorbus.internal} instead.
     */
    static final ArchRule IMPL_STAYS_IN_ITS_PARENT = classes().that().resideInAPackage("..impl..")
            .should(beUsedOnlyWithinTheirParent());

    /** The packages users import: their public signatures are the API. */
    static final String[] USER = {"io.tensorbus", "io.tensorbus.tensor..", "io.tensorbus.autograd..",
            "io.tensorbus.nn..", "io.tensorbus.optim..", "io.tensorbus.data..", "io.tensorbus.io..",
            "io.tensorbus.c10d..", "io.tensorbus.distributed..", "io.tensorbus.parallel..", "io.tensorbus.mutiny..",
            "io.tensorbus.hazelcast.."};

    /**
     * An {@code internal} package is shared between tensorbus's own packages and is not an API: no public method,
     * constructor or field of a public class in a user package names an {@code internal}, {@code impl} or plugin
     * SPI type as its type, a parameter's or its result's. (The SPI's device types are no exception: users reach
     * devices through {@code Device} and {@code Tensor}.)
     */
    static final ArchRule USER_API_NAMES_NO_INTERNALS = classes().that().resideInAnyPackage(USER)
            .and().resideOutsideOfPackages("..impl..").and().arePublic()
            .should(exposeNoHiddenTypes());

    /**
     * No cycles between the top-level packages (an {@code internal.X} package counts as part of {@code X}, whose
     * internals it holds). Justified exceptions, as slices assigned together: {@code tensor} and {@code autograd}
     * are one engine (a tensor holds its {@code gradFn}, nodes compute on tensors), as in PyTorch, where autograd
     * metadata lives on the tensor.
     */
    static final ArchRule NO_PACKAGE_CYCLES = slices().assignedFrom(topLevelPackages()).should().beFreeOfCycles();

    /** The rules see every module's production classes and none of the tests': else they would pass vacuously. */
    @Test
    void theImportHoldsEveryArtifactAndNoTests() {
        for (String c : List.of("io.tensorbus.DType", "io.tensorbus.tensor.Tensor", "io.tensorbus.c10d.ReduceOp",
                "io.tensorbus.spi.BackendProvider", "io.tensorbus.backend.tcp.TcpBackend",
                "io.tensorbus.distributed.ProcessGroup", "io.tensorbus.parallel.DistributedDataParallel",
                "io.tensorbus.hazelcast.HazelcastCluster", "io.tensorbus.mutiny.UniProcessGroup",
                "io.tensorbus.workloads.cli.Main", "io.tensorbus.it.sample.TracingBackend")) {
            assertTrue(production.contain(c), c + " was not imported");
        }
        for (Class<?> test : List.of(ArchitectureTest.class, CoreClassImportingVertx.class)) {
            assertFalse(production.contain(test), test + " is a test class, yet it was imported");
        }
        assertFalse(production.stream().anyMatch(c -> c.getPackageName().startsWith("io.tensorbus.spi.contract")),
                "the SPI's test jar was imported");
    }

    @Test
    void coreNeedsNoVertx() {
        CORE_NEEDS_NO_VERTX.check(production);
        DEVICE_SPI_NEEDS_NO_VERTX.check(production);
    }

    @Test
    void spiImportsNoApi() {
        SPI_IMPORTS_NO_API.check(production);
    }

    @Test
    void contractNeedsNoSupport() {
        CONTRACT_NEEDS_NO_SUPPORT.check(production);
    }

    @Test
    void userTypesNameNoPluginTypes() {
        USER_TYPES_NAME_NO_PLUGIN_TYPES.check(production);
    }

    @Test
    void backendsImportNoApi() {
        BACKENDS_IMPORT_NO_API.check(production);
    }

    @Test
    void distributedNeedsNoClustering() {
        DISTRIBUTED_NEEDS_NO_CLUSTERING.check(production);
    }

    @Test
    void examplesUseTheUserApi() {
        EXAMPLES_USE_THE_USER_API.check(production);
    }

    @Test
    void implStaysInItsParent() {
        IMPL_STAYS_IN_ITS_PARENT.check(production);
    }

    @Test
    void userApiNamesNoInternals() {
        USER_API_NAMES_NO_INTERNALS.check(production);
    }

    @Test
    void noPackageCycles() {
        NO_PACKAGE_CYCLES.check(production);
    }

    static ArchCondition<JavaClass> exposeNoHiddenTypes() {
        return new ArchCondition<>("name no internal, impl or plugin SPI type in a public signature") {
            @Override
            public void check(JavaClass c, ConditionEvents events) {
                for (JavaMember m : c.getMembers()) {
                    if (!m.getModifiers().contains(JavaModifier.PUBLIC)) {
                        continue;
                    }
                    List<JavaClass> named = new ArrayList<>();
                    if (m instanceof JavaCodeUnit u) {
                        named.add(u.getRawReturnType());
                        named.addAll(u.getRawParameterTypes());
                    } else if (m instanceof JavaField f) {
                        named.add(f.getRawType());
                    }
                    for (JavaClass t : named) {
                        if (hidden(t.getPackageName())) {
                            events.add(SimpleConditionEvent.violated(m, m.getFullName() + " names " + t.getName()));
                        }
                    }
                }
            }
        };
    }

    private static boolean hidden(String pkg) {
        return pkg.startsWith("io.tensorbus.internal") || pkg.startsWith("io.tensorbus.spi")
                || pkg.startsWith("io.tensorbus.") && (pkg.endsWith(".impl") || pkg.contains(".impl."));
    }

    static ArchCondition<JavaClass> beUsedOnlyWithinTheirParent() {
        return new ArchCondition<>("be used only within the parent package of their impl package") {
            @Override
            public void check(JavaClass target, ConditionEvents events) {
                String pkg = target.getPackageName();
                String parent = pkg.substring(0, pkg.indexOf(".impl"));
                for (Dependency d : target.getDirectDependenciesToSelf()) {
                    String from = d.getOriginClass().getPackageName();
                    if (!from.equals(parent) && !from.startsWith(parent + ".")) {
                        events.add(SimpleConditionEvent.violated(d, d.getDescription()
                                + ": outside " + parent + ", which owns " + pkg));
                    }
                }
            }
        };
    }

    static SliceAssignment topLevelPackages() {
        Pattern top = Pattern.compile("io\\.tensorbus\\.(?:internal\\.)?(\\w+).*");
        return new SliceAssignment() {
            @Override
            public SliceIdentifier getIdentifierOf(JavaClass c) {
                Matcher m = top.matcher(c.getPackageName());
                if (!m.matches()) {
                    return SliceIdentifier.ignore();
                }
                String slice = m.group(1).equals("autograd") ? "tensor" : m.group(1);
                return SliceIdentifier.of(slice);
            }

            @Override
            public String getDescription() {
                return "top-level packages of io.tensorbus (internal.X with X; tensor with autograd)";
            }
        };
    }

    private static String[] concat(String[] a, String... b) {
        return Stream.concat(Stream.of(a), Stream.of(b)).toArray(String[]::new);
    }
}
