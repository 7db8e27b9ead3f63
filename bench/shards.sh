#!/usr/bin/env bash
# Fleets from S3 and as shards (issue 26), in one run on this machine:
# - a fleet of small logs verified from local disk and from moto's S3
#   server (bytes/s, peak RSS, requests);
# - the same fleet as 1 run with 2 threads, 1 shard of 1, and 2 shards of
#   1 thread each run side by side plus the merge: the shard overhead
#   (listing, partition, merge) as a share of the single run's time.
#
#   bench/shards.sh                                  # 10,000 logs, ~1 GB
#   bench/shards.sh --fleet-files 1000 --fleet-mb 100 --s3-files 1000
#
# Needs .venv/bin/moto_server (scripts/setup-test-env.sh). Data is kept in
# $VOUCH_BENCH_DIR (default /tmp/vouch-bench), shared with bench/verify.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --quiet
exec python3 bench/shards_bench.py --vouch target/release/vouch "$@"
