# Sourced by the workflow's tests, after `name=` (the test's name) is set and from the
# repository's root: a missing prerequisite FAILS the test naming the fix, or, with
# JOJ_SKIP_KERNEL_TESTS=1, is logged as skipped ($JOJ_SKIP_LOG), never passed.
skip_or_fail() {
  if [ -n "${JOJ_SKIP_KERNEL_TESTS:-}" ] && [ "${JOJ_SKIP_KERNEL_TESTS}" != 0 ]; then
    echo "$name: SKIPPED: $1" >&2
    [ -n "${JOJ_SKIP_LOG:-}" ] && echo "workflow/tests/$name.sh: $1" >> "$JOJ_SKIP_LOG"
    exit 0
  fi
  echo "$name: FAILED: $1; fix: $2" >&2
  exit 1
}
# Root, Snakemake in target/venv and target/release/joj, which every workflow test needs.
[ "$(id -u)" -eq 0 ] || skip_or_fail "needs root" "run as root"
[ -x target/venv/bin/snakemake ] || skip_or_fail "no target/venv/bin/snakemake" "./scripts/setup.sh"
[ -x target/release/joj ] || skip_or_fail "no target/release/joj" "./scripts/setup.sh"
