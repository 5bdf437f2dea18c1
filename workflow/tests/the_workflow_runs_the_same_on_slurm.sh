#!/usr/bin/env bash
# The workflow runs unchanged on a real Slurm (issue 36): a single-node Slurm on this machine
# (workflow/slurm/local-slurm.sh: munged, slurmctld, slurmd on localhost, started here and
# stopped at the end), and a small target built twice from the same workflow — locally, then
# through Snakemake's Slurm executor — must give the same results:
#   - a crash-state row (ext4, wal) in 3 shards merged: the whole document, but for the
#     timings, identical (the Slurm run checks the shares of the log the local run recorded:
#     two recordings never log the same bytes);
#   - one ATC'13 matrix cell (a traced joj bench, recorded on a Slurm node): what SQLite did
#     (config, transactions, system calls, bytes per file) identical; its measured speed and
#     block counts are the kernel's of that run and are not compared.
# Needs root, Debian's slurmctld/slurmd/slurm-client/munge and target/venv (scripts/setup.sh).
# A missing prerequisite FAILS the test, naming the fix; with JOJ_SKIP_KERNEL_TESTS=1 it is
# skipped and logged as skipped ($JOJ_SKIP_LOG), never passed.
set -euo pipefail
cd "$(dirname "$0")/../.."
name=the_workflow_runs_the_same_on_slurm
snakemake=target/venv/bin/snakemake
. workflow/tests/prerequisites.sh
command -v slurmctld >/dev/null || skip_or_fail "Slurm is not installed" "./scripts/setup.sh"

work=$(mktemp -d /tmp/joj-slurm-test.XXXXXX)
cleanup() {
  workflow/slurm/local-slurm.sh stop || true
  rm -rf "$work"
}
trap cleanup EXIT
# The test's sizes: a profile of its own, merged into workflow/config.yaml.
cat > "$work/config.yaml" <<CONF
profile: slurmtest
profiles:
  slurmtest:
    atc13_n: 50
    crash_big: 90
    crash_small: 60
    crash_n_max: 20
    crash_shards: 3
    crash_rows: [ext4-wal]
    # (the other tables are not asked for)
    joj_n: 1
    joj_filesystems: []
    waldio_n: 1
    waldio_speed_rounds: 1
    waldio_speed_n: 1
    xftl_n: 1
    xftl_grids: {}
    xftl_restart_runs: 1
    xftl_restart_devices: []
    xftl_cuts: 1
    xftl_canary_cuts: 1
    xftl_compares: []
    iftl_n: 1
    extjournal_n: 1
    extjournal_variants: []
    emmc_journal_n: 1
    fidelity_n: 1
    fidelity_filesystems: []
    fidelity_rows: []
    timecheck_kinds: []
    timecheck_n: 1
    timecheck_card_n: 1
    timecheck_wal_n: 1
    timecheck_repeats: 1
    timecheck_cell_runs: 1
    timecheck_ops: []
    timecheck_wait_s: 0
    timecheck_disk_dir: /var/tmp/joj-timecheck
    timecheck_cpus_awake: false
CONF
row=crash-states/ext4-wal.json
cell=atc13matrix/ext4-fsync-truncate-insert
run() {  # run OUT [snakemake args…]
  local out=$1; shift
  "$snakemake" -s workflow/Snakefile --configfile "$work/config.yaml" --config "out=$out" \
    -j 2 "$@" "$out/$row" "$out/$cell" > "$out.log" 2>&1 || {
    tail -40 "$out.log" >&2
    echo "$name: FAILED: snakemake $* did not build the target (log above, $out.log)" >&2
    exit 1
  }
}
mkdir -p "$work/local" "$work/slurm/crash-states/ext4-wal"
run "$work/local"
# The Slurm run checks the same log: the record step's outputs, as the local run made them.
cp -p "$work/local/crash-states/ext4-wal/run.blocklog" "$work/local/crash-states/ext4-wal/record.json" \
  "$work/slurm/crash-states/ext4-wal/"
workflow/slurm/local-slurm.sh start
eval "$(workflow/slurm/local-slurm.sh env)"
ctld_log="$(workflow/slurm/local-slurm.sh dir)/slurmctld.log"
ctld_lines=$(wc -l < "$ctld_log")
run "$work/slurm" --workflow-profile workflow/profiles/slurm
# 3 shards, the merge and the matrix cell ran as Slurm jobs: each job id Snakemake says it
# submitted must be one the controller ran to exit status 0 during this run. (Counting squeue's list before and
# after does not work: finished jobs of an earlier run, kept in the state folder, age out of it
# during this one.)
submitted=0
for id in $(sed -n 's/.*submitted with SLURM jobid \([0-9]*\).*/\1/p' "$work/slurm.log"); do
  tail -n "+$((ctld_lines + 1))" "$ctld_log" | grep -q "_job_complete: JobId=$id WEXITSTATUS 0" \
    && submitted=$((submitted + 1))
done
[ "$submitted" -ge 5 ] || { echo "$name: FAILED: only $submitted Slurm jobs ran to exit status 0 (want 5: 3 shards, merge, cell)" >&2; tail -30 "$work/slurm.log" >&2; exit 1; }
python3 - "$work/local" "$work/slurm" "$row" "$cell" <<'PY'
import json, sys
local, slurm, row, cell = sys.argv[1:]
def load(base, path):
    return json.load(open(f"{base}/{path}"))
a, b = load(local, row), load(slurm, row)
for d in (a, b):
    d.pop("check_s"); d.pop("states_per_s")
assert a == b, "the crash-state row differs between the local and the Slurm run: " + \
    ", ".join(k for k in a if a[k] != b.get(k))
assert a["states_explored"] == 90 and a["violations"] == 0, a
a, b = load(local, cell + "/run.json"), load(slurm, cell + "/run.json")
for key in ["config", "transactions", "syscalls", "files"]:
    assert a[key] == b[key], f"the matrix cell's {key} differs: {a[key]} / {b[key]}"
print(f"the workflow runs the same on slurm: crash row ({a['transactions']} transactions cell, "
      f"90 states in 3 shards) and matrix cell identical")
PY
echo "$name: passed ($submitted Slurm jobs)" >&2
