#!/usr/bin/env bash
# Stamping throughput, side by side with the hashing floor.
#
# Measures in one run, warm page cache, best of N:
#   (a) one large file (default 4 GiB): `openssl dgst -sha256` vs
#       `vouch stamp FILE`;
#   (b) a tree of at least 100,000 files (a copy of /usr): `sha256sum` and
#       `openssl dgst -sha256` through `xargs -0 -P$(nproc)`, vs
#       `vouch stamp TREE` and `vouch stamp verify`;
#   (c) with --million: 1,000,000 small files, peak RSS of stamp and verify.
# Prints wall times, files/s, MB/s, ratios and peak RSS.
#
#   bench/stamp.sh                          # full size (~10 GB of disk)
#   bench/stamp.sh --file-gb 1 --tree /usr/share --runs 1      # quick
#   bench/stamp.sh --million                # also the 1M-file memory run
#
# Generated data is kept in $VOUCH_BENCH_DIR (default /tmp/vouch-bench).
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --quiet
exec python3 bench/stamp_bench.py --vouch target/release/vouch "$@"
