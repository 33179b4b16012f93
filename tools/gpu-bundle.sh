#!/usr/bin/env bash
# Packs what a CUDA machine without Java or Maven needs to run tensorbus's GPU checks (docs/gpu.md): a jlink image
# of this JDK, the workloads' runtime jars (without Hazelcast, which the checks do not use), the test classes of
# backends/nccl with the contract test jar, and JUnit's console launcher; plus run-gpu-checks.sh, which runs them.
# Usage: tools/gpu-bundle.sh [OUT]   (default OUT: target/gpu-bundle; it is replaced)
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
OUT="${1:-$ROOT/target/gpu-bundle}"
JUNIT_CONSOLE="org.junit.platform:junit-platform-console-standalone:1.11.4"

JDK=""
for candidate in "${JAVA_HOME:-}" /usr/lib/jvm/*25*; do
    if [[ -n "$candidate" && -x "$candidate/bin/jlink" ]] \
        && "$candidate/bin/java" -version 2>&1 | grep -Eq 'version "(2[5-9]|[3-9][0-9])'; then
        JDK="$candidate"
        break
    fi
done
[[ -n "$JDK" ]] || { echo "gpu-bundle: needs a JDK 25 or newer with jlink (set JAVA_HOME)" >&2; exit 1; }

cd "$ROOT"
echo "gpu-bundle: building the jars and test classes..." >&2
./mvnw -q -B install -DskipTests -pl workloads -am
./mvnw -q -B test-compile -pl backends/nccl

rm -rf "$OUT"
mkdir -p "$OUT/lib" "$OUT/test"
for jar in workloads/target/lib/*.jar workloads/target/tensorbus-workloads-*.jar \
           plugin-support/target/tensorbus-plugin-support-*-tests.jar; do
    case "$(basename "$jar")" in
        hazelcast-*|vertx-hazelcast-*|tensorbus-hazelcast-*|*-sources.jar|*-javadoc.jar) ;;
        *) cp "$jar" "$OUT/lib/" ;;
    esac
done
cp -r backends/nccl/target/test-classes "$OUT/test/nccl"
./mvnw -q -B dependency:copy -Dartifact="$JUNIT_CONSOLE" -DoutputDirectory="$OUT/junit"

# jdeps prints warnings (split packages) on the same stream: the module list is its one line of names and commas.
MODULES="$("$JDK/bin/jdeps" --multi-release 25 --ignore-missing-deps --print-module-deps "$OUT"/lib/*.jar 2>/dev/null \
    | grep -E '^[a-z][a-z0-9.]*(,[a-z][a-z0-9.]*)*$' | tail -1)"
"$JDK/bin/jlink" --add-modules "$MODULES,java.xml,java.management,jdk.incubator.vector,jdk.crypto.ec,jdk.zipfs,jdk.jfr" \
    --compress=zip-9 --strip-debug --no-header-files --no-man-pages --output "$OUT/jdk" \
    $(command -v objcopy >/dev/null && echo --strip-native-debug-symbols=objcopy="$(command -v objcopy)")

cat > "$OUT/run-gpu-checks.sh" <<'RUN'
#!/usr/bin/env bash
# Runs tensorbus's GPU checks with the bundled JDK: `tensorbus info`, the CUDA and NCCL test classes (the
# device training suites among them; the NCCL contract suite needs 3 GPUs), the training benchmarks on cuda:0,
# and the nccl all-reduce benchmark on every GPU. Reports go to ${OUT:-.}.
set -uo pipefail
B="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPORTS="${OUT:-$B/reports}"
mkdir -p "$REPORTS"
JAVA=("$B/jdk/bin/java" --add-modules jdk.incubator.vector --enable-native-access=ALL-UNNAMED)
CP="$B/lib/*"
"${JAVA[@]}" -cp "$CP" io.tensorbus.workloads.cli.Main info 2>&1 | tee "$REPORTS/info.txt"
# JUnit's -cp takes no wildcards: every jar by name.
JARS="$(printf '%s:' "$B"/lib/*.jar)"
"${JAVA[@]}" -Xmx8g -jar "$B"/junit/junit-platform-console-standalone-*.jar execute --disable-ansi-colors \
    -cp "$B/test/nccl:$JARS" --select-package io.tensorbus.backend.nccl --details=tree \
    --reports-dir "$REPORTS/junit" 2>&1 | tee "$REPORTS/tests.txt"
# Training on the GPU: the tutorial network's step and ResNet-50 images/s, with the GPU's name and clocks.
nvidia-smi --query-gpu=name,memory.total,clocks.max.sm --format=csv 2>&1 | tee "$REPORTS/gpu.txt"
"${JAVA[@]}" -Xmx8g -cp "$CP" io.tensorbus.workloads.cli.Main bench nn --device cuda 2>&1 | tee "$REPORTS/bench-nn-cuda.txt"
"${JAVA[@]}" -Xmx8g -cp "$CP" io.tensorbus.workloads.cli.Main bench ddp --world 1 --warmup 50 --steps 60 --device cuda \
    2>&1 | tee "$REPORTS/bench-ddp-cuda.txt"
GPUS="$(nvidia-smi -L 2>/dev/null | wc -l)"
if [[ "$GPUS" -ge 2 ]]; then
    "${JAVA[@]}" -cp "$CP" io.tensorbus.workloads.cli.Main bench collectives --world "$GPUS" --ops allreduce \
        --backend nccl --device cuda 2>&1 | tee "$REPORTS/bench-nccl.txt"
else
    echo "bench collectives --backend nccl needs 2 GPUs or more; this machine has $GPUS" | tee "$REPORTS/bench-nccl.txt"
fi
RUN
chmod +x "$OUT/run-gpu-checks.sh"
echo "gpu-bundle: $(du -sh "$OUT" | cut -f1) in $OUT; run $OUT/run-gpu-checks.sh on the GPU machine" >&2
# One file that the device tool's `carry` takes (64 MiB at most): unpack it there with tar -xJf.
tar -C "$(dirname "$OUT")" -cJf "$OUT.tar.xz" "$(basename "$OUT")"
echo "gpu-bundle: $(du -h "$OUT.tar.xz" | cut -f1) packed in $OUT.tar.xz" >&2
