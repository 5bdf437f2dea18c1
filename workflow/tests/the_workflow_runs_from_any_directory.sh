#!/usr/bin/env bash
# The workflow runs with its outputs in any folder (`snakemake -d DIR`), not only from the
# repository's root: the joj binary and the profiles it reads are named from the repository,
# the outputs from DIR. Before this test, `-d` made every rule's input `target/release/joj`
# relative to DIR, and Snakemake refused the whole workflow (MissingInputException).
#   1. a dry run of every table (`-n tables`) from another folder plans without a missing input;
#   2. one small rule (a single-transaction `joj compare` row, about 10 s) runs there for real
#      and writes its JSON beneath DIR, nothing beneath the repository.
# Needs root (joj compare mounts scratch filesystems), target/venv and target/release/joj
# (scripts/setup.sh). A missing prerequisite FAILS the test, naming the fix; with
# JOJ_SKIP_KERNEL_TESTS=1 it is skipped and logged as skipped ($JOJ_SKIP_LOG), never passed.
set -euo pipefail
cd "$(dirname "$0")/../.."
repo=$PWD
name=the_workflow_runs_from_any_directory
snakemake=$repo/target/venv/bin/snakemake
. workflow/tests/prerequisites.sh
fail() {
  echo "$name: FAILED: $1" >&2
  exit 1
}

work=$(mktemp -d /tmp/joj-workdir-test.XXXXXX)
trap 'rm -rf "$work"' EXIT
# Started from a folder that is neither the repository nor the output folder.
mkdir "$work/elsewhere" "$work/out"
cd "$work/elsewhere"

if ! "$snakemake" -s "$repo/workflow/Snakefile" -d "$work/out" -n tables \
    > "$work/dry.log" 2>&1; then
  sed 's/^/  /' "$work/dry.log" >&2
  fail "a dry run of every table with -d DIR did not plan (its output above)"
fi

row=ext4-single
if ! "$snakemake" -s "$repo/workflow/Snakefile" -d "$work/out" -j 1 \
    "joj-out/workflow/joj/$row.json" > "$work/run.log" 2>&1; then
  sed 's/^/  /' "$work/run.log" >&2
  fail "the rule for joj/$row.json did not run with -d DIR (its output above)"
fi
json="$work/out/joj-out/workflow/joj/$row.json"
[ -s "$json" ] || fail "no $json after the run"
python3 - "$json" <<'PY' || fail "$json is not a joj compare document"
import json, sys
doc = json.load(open(sys.argv[1]))
assert isinstance(doc.get("rows"), list) and doc["rows"], "no rows"
PY
[ -z "$(ls -A "$work/elsewhere")" ] || fail "the run wrote into the folder it was started from"
echo "$name: ok (dry run of every table and one rule, outputs beneath -d DIR)" >&2
