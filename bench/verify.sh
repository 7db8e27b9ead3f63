#!/usr/bin/env bash
# Verification throughput and CPU cost, side by side with the physical floor.
#
# Generates, with vouch itself, (a) one log of about 1.2 GB and (b) a fleet
# of 10,000 logs of mixed sizes totalling about 1.3 GB, then measures in one
# paired run, a few rounds, each round running every command once in turn
# (medians reported): `openssl dgst -sha256` over the same bytes (one core
# just hashing), `vouch verify` with 1 thread and with all threads, the
# fleet, and, with --baseline, the same runs of an older binary alternating
# with this one. Wall time, CPU time (user+sys, from rusage) and peak RSS
# for each; then the targets of issue 27 and an incremental re-verification
# after appending 1% new records.
#
#   bench/verify.sh                                  # this tree alone
#   bench/verify.sh --baseline /tmp/vouch-old        # paired: old vs this tree
#   bench/verify.sh --single-mb 200 --fleet-files 1000 --fleet-mb 100 --rounds 3   # quick
#
# On a shared machine wall time is noisy: read CPU time first, and keep the
# comparison paired. Generated data is kept in $VOUCH_BENCH_DIR (default
# /tmp/vouch-bench, about 3.7 GB at full size) and reused by later runs of
# the same size.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --quiet --bin vouch
exec python3 bench/verify_bench.py --vouch "${CARGO_TARGET_DIR:-target}/release/vouch" "$@"
