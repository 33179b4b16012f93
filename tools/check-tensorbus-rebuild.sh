#!/usr/bin/env bash
# Checks that ./tensorbus runs what is checked out: in a copy of the working tree it builds on first use,
# does not rebuild when nothing changed, and rebuilds (saying so in one line) after a main source is edited;
# the first build also trains the JVM's AOT cache, once. Run by .ci/run; takes two builds and one short
# training run (about two and a half minutes here).
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT

fail() {
    echo "check-tensorbus-rebuild: FAILED: $*" >&2
    exit 1
}

# Tracked and untracked-but-not-ignored files: what a clone would have, plus local edits.
(cd "$ROOT" && git ls-files -z --cached --others --exclude-standard \
    | tar --null --no-recursion -T - -cf -) | (cd "$WORK" && tar -xf -)

(cd "$WORK" && ./tensorbus info) >"$WORK/first.out" 2>"$WORK/first.err" || { cat "$WORK/first.err" >&2; fail "first run"; }
grep -q "tensorbus: building the jars (no jars built yet)" "$WORK/first.err" || fail "the first run did not say it builds"
grep -q "training the JVM's ahead-of-time cache" "$WORK/first.err" || fail "the first run made no AOT cache"
ls "$WORK"/workloads/target/tensorbus-*.aot >/dev/null 2>&1 \
    || fail "no AOT cache after the first run: $(cat "$WORK/workloads/target/aot-training.log" 2>/dev/null | tail -5)"

(cd "$WORK" && ./tensorbus info) >"$WORK/second.out" 2>"$WORK/second.err" || fail "second run"
! grep -q "building the jars" "$WORK/second.err" || fail "rebuilt although nothing changed: $(cat "$WORK/second.err")"
! grep -q "ahead-of-time" "$WORK/second.err" || fail "trained the AOT cache again: $(cat "$WORK/second.err")"

INFO="$WORK/workloads/src/main/java/io/tensorbus/workloads/cli/Info.java"
sed -i 's|out.println("tensorbus: " + version());|out.println("tensorbus: " + version()); out.println("edited after the build");|' "$INFO"
grep -q "edited after the build" "$INFO" || fail "could not edit $INFO"
(cd "$WORK" && TENSORBUS_AOT=off ./tensorbus info) >"$WORK/third.out" 2>"$WORK/third.err" || { cat "$WORK/third.err" >&2; fail "third run"; }
grep -q "tensorbus: building the jars (workloads/src/main/java/io/tensorbus/workloads/cli/Info.java changed" \
    "$WORK/third.err" || fail "no rebuild line after the edit: $(cat "$WORK/third.err")"
[[ "$(grep -c 'building the jars' "$WORK/third.err")" == 1 ]] || fail "more than one line about the build"
grep -q "^edited after the build$" "$WORK/third.out" || fail "the edit did not reach the jar: $(cat "$WORK/third.out")"
echo "check-tensorbus-rebuild: ok (built and AOT-trained on first use, not again while unchanged, rebuilt after an edit)"
