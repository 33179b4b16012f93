package io.tensorbus.it.arch;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.lang.ArchRule;
import com.tngtech.archunit.lang.EvaluationResult;
import io.tensorbus.data.archfixture.CycleEnd;
import io.tensorbus.distributed.archfixture.UsesMutiny;
import io.tensorbus.distributed.rpc.impl.RpcFrame;
import io.tensorbus.internal.tensor.Shapes;
import io.tensorbus.nn.archfixture.ReachesIntoAnotherPackagesImpl;
import io.tensorbus.optim.archfixture.CycleStart;
import io.tensorbus.spi.archfixture.ContractNamingSupport;
import io.tensorbus.spi.archfixture.PluginNamingTensor;
import io.tensorbus.spi.Backend;
import io.tensorbus.spi.support.HostReductions;
import io.tensorbus.tensor.Tensor;
import io.tensorbus.tensor.archfixture.CoreClassImportingVertx;
import io.tensorbus.tensor.archfixture.LeaksAnInternalType;
import io.tensorbus.workloads.examples.GroupAllReduce;
import io.tensorbus.workloads.examples.archfixture.ExampleUsingAnInternal;
import java.util.Arrays;
import org.junit.jupiter.api.Test;

/**
 * The rules of {@link ArchitectureTest} catch what they are for: each meets a deliberately bad class of this
 * test's own sources (package {@code archfixture}) and reports it, and passes the same class's neighbours.
 */
class ArchitectureRulesTest {
    private static String reportOf(ArchRule rule, Class<?>... classes) {
        JavaClasses imported = new ClassFileImporter().importClasses(classes);
        EvaluationResult result = rule.evaluate(imported);
        assertTrue(result.hasViolation(), rule.getDescription() + " passed " + Arrays.toString(classes));
        return result.getFailureReport().toString();
    }

    @Test
    void aCoreClassImportingVertxIsReported() {
        String report = reportOf(ArchitectureTest.CORE_NEEDS_NO_VERTX, CoreClassImportingVertx.class);
        assertTrue(report.contains("CoreClassImportingVertx") && report.contains("io.vertx.core.Future"), report);
    }

    @Test
    void anImplImportFromOutsideItsParentIsReported() {
        String report = reportOf(ArchitectureTest.IMPL_STAYS_IN_ITS_PARENT, ReachesIntoAnotherPackagesImpl.class,
                RpcFrame.class);
        assertTrue(report.contains("ReachesIntoAnotherPackagesImpl") && report.contains("RpcFrame"), report);
    }

    @Test
    void aPluginNamingAnApiClassIsReported() {
        String report = reportOf(ArchitectureTest.SPI_IMPORTS_NO_API, PluginNamingTensor.class);
        assertTrue(report.contains("PluginNamingTensor") && report.contains(Tensor.class.getName()), report);
    }

    @Test
    void aContractClassNamingPluginSupportIsReported() {
        String report = reportOf(ArchitectureTest.CONTRACT_NEEDS_NO_SUPPORT, ContractNamingSupport.class);
        assertTrue(report.contains("ContractNamingSupport") && report.contains(HostReductions.class.getName()),
                report);
    }

    @Test
    void anExampleUsingAnInternalIsReported() {
        String report = reportOf(ArchitectureTest.EXAMPLES_USE_THE_USER_API, ExampleUsingAnInternal.class);
        assertTrue(report.contains("ExampleUsingAnInternal") && report.contains(Shapes.class.getName()), report);
    }

    @Test
    void distributedCodeUsingMutinyIsReported() {
        String report = reportOf(ArchitectureTest.DISTRIBUTED_NEEDS_NO_CLUSTERING, UsesMutiny.class);
        assertTrue(report.contains("UsesMutiny") && report.contains("io.smallrye.mutiny.Uni"), report);
    }

    @Test
    void aUserClassHandingOutAnInternalTypeIsReported() {
        String report = reportOf(ArchitectureTest.USER_API_NAMES_NO_INTERNALS, LeaksAnInternalType.class);
        assertTrue(report.contains("LeaksAnInternalType.view()") && report.contains("Strided$View")
                && !report.contains("name()"), report);
    }

    @Test
    void aCycleBetweenTwoPackagesIsReported() {
        String report = reportOf(ArchitectureTest.NO_PACKAGE_CYCLES, CycleStart.class, CycleEnd.class);
        assertTrue(report.contains("optim") && report.contains("data"), report);
    }

    @Test
    void theRulesPassTheClassesNextToTheFixtures() {
        JavaClasses fine = new ClassFileImporter().importClasses(Tensor.class, RpcFrame.class, Backend.class,
                GroupAllReduce.class);
        assertFalse(ArchitectureTest.CORE_NEEDS_NO_VERTX.evaluate(fine).hasViolation());
        assertFalse(ArchitectureTest.IMPL_STAYS_IN_ITS_PARENT.evaluate(fine).hasViolation());
        assertFalse(ArchitectureTest.USER_API_NAMES_NO_INTERNALS.evaluate(fine).hasViolation());
        assertFalse(ArchitectureTest.CONTRACT_NEEDS_NO_SUPPORT.evaluate(fine).hasViolation());
        assertFalse(ArchitectureTest.EXAMPLES_USE_THE_USER_API.evaluate(fine).hasViolation());
    }
}
