#!/usr/bin/env bash
# Verification throughput, side by side with the physical floor.
#
# Generates, with vouch itself, (a) one log of about 2 GB and (b) a fleet of
# 10,000 logs of mixed sizes totalling about 1 GB, then measures in one run:
# `openssl dgst -sha256` over the same bytes (one core just hashing),
# `vouch verify` with 1 thread and with all threads, and an incremental
# re-verification after appending 1% new records. Prints throughput, ratios
# and peak RSS.
#
#   bench/verify.sh                      # full size (needs ~3.5 GB of disk)
#   bench/verify.sh --single-mb 200 --fleet-files 1000 --fleet-mb 100   # quick
#
# Generated data is kept in $VOUCH_BENCH_DIR (default /tmp/vouch-bench) and
# reused by later runs of the same size.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --quiet
exec python3 bench/verify_bench.py --vouch target/release/vouch "$@"
