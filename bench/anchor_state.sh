#!/usr/bin/env bash
# Cost of a daily `vouch anchor verify` over many S3 anchors: a full run
# (every object downloaded) vs. a run with --state (HEAD of old anchors),
# against moto's S3 server from .venv (scripts/setup-test-env.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --quiet
exec .venv/bin/python bench/anchor_state_bench.py --vouch target/release/vouch "$@"
