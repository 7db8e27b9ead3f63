#!/usr/bin/env bash
# Cost of `vouch checkpoint` on a large log: full re-verification vs the
# writer's tree cache (see bench/checkpoint_bench.py).
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --quiet
exec python3 bench/checkpoint_bench.py --vouch target/release/vouch "$@"
