#!/usr/bin/env bash
# Set up a fresh Debian machine for joj: kernel-measurement tools and a release build.
# Idempotent. Needs root for apt-get (skipped when every tool is already there).
set -euo pipefail
cd "$(dirname "$0")/.."

need=()
for tool in mkfs.ext4:e2fsprogs debugfs:e2fsprogs mkfs.xfs:xfsprogs xfs_db:xfsprogs \
            mkfs.btrfs:btrfs-progs blkparse:blktrace losetup:mount cc:gcc \
            sqlite3:sqlite3 /usr/bin/python3:python3 taskset:util-linux xfs_io:xfsprogs \
            strace:strace slurmctld:slurmctld slurmd:slurmd sbatch:slurm-client munged:munge \
            chromium:chromium clang:clang; do
  command -v "${tool%%:*}" >/dev/null 2>&1 || need+=("${tool##*:}")
done
# The loadable extension is built against the system SQLite's headers (libsqlite3-dev), with
# bindgen, which needs libclang (libclang-dev).
[ -e /usr/include/sqlite3ext.h ] || need+=(libsqlite3-dev)
ls /usr/lib/llvm-*/lib/libclang.so >/dev/null 2>&1 || need+=(libclang-dev)
# joj-linux's BPF observer (crates/joj-linux/bpf) is compiled with clang against libbpf's
# headers at build time.
[ -e /usr/include/bpf/bpf_helpers.h ] || need+=(libbpf-dev)
# The workflow (workflow/Snakefile) runs Snakemake from a virtual environment.
python3 -c 'import venv, ensurepip' >/dev/null 2>&1 || need+=(python3-venv)
if [ "${#need[@]}" -gt 0 ]; then
  if [ "$(id -u)" -ne 0 ]; then
    echo "setup: missing packages ${need[*]}; run as root or: sudo apt-get install ${need[*]}" >&2
    exit 1
  fi
  echo "setup: installing ${need[*]}" >&2
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
fi
if ! command -v cargo >/dev/null 2>&1; then
  echo "setup: cargo not found; install Rust with rustup (https://rustup.rs) and rerun" >&2
  exit 1
fi
# tracefs is where joj captures block requests; mount it if the system has not.
if [ "$(id -u)" -eq 0 ] && [ ! -e /sys/kernel/tracing/instances ]; then
  mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null || true
fi
cargo build --release --locked -p joj-cli
echo "setup: built target/release/joj" >&2
# The loadable SQLite extension is its own cargo workspace (see crates/joj-ext/Cargo.toml).
(cd crates/joj-ext && cargo build --release --locked)
echo "setup: built target/ext/release/libjoj.so (the SQLite extension)" >&2
# Snakemake and its Slurm executor, pinned, in target/venv (docs/workflow.md).
snakemake_pins=(snakemake==9.27.1 snakemake-executor-plugin-slurm==2.8.0)
if [ "$(target/venv/bin/snakemake --version 2>/dev/null)" != 9.27.1 ] \
   || ! target/venv/bin/python -c 'import snakemake_executor_plugin_slurm' 2>/dev/null; then
  python3 -m venv target/venv
  target/venv/bin/pip install -q "${snakemake_pins[@]}"
fi
echo "setup: Snakemake $(target/venv/bin/snakemake --version) in target/venv (the workflow)" >&2
