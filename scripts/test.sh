#!/usr/bin/env bash
# The whole test suite, as CI runs it: formatting, lints, and every test (unit, integration,
# kernel-level). Kernel-level tests need root, loop devices and tracefs; with CI set they fail
# rather than skip when one is missing.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
cargo fmt --all -- --check
cargo clippy --workspace --all-targets --release --locked -- -D warnings
cargo test --workspace --release --locked -- --test-threads=2
