#!/usr/bin/env bash
# Drift checking of a directory tree, side by side with AIDE, hashdeep and
# the sha256sum floor.
#
# On one tree (default /usr; nothing is copied, nothing written in it),
# measures wall time and peak RSS (/usr/bin/time -f '%e %M') of:
#   aide --init, aide --check   Debian aide 0.18, sha256 and the attributes
#                               vouch compares: p+ftype+u+g+s+l+sha256
#                               (i, n, m, c would come from the same lstat
#                               at no cost, but vouch does not compare them
#                               by default), num_workers = nproc,
#                               uncompressed database, report_format=plain;
#   hashdeep build, audit       hashdeep -c sha256 -r -j$(nproc), then
#                               -a -k KNOWN; content only, and it FOLLOWS
#                               symlinks (more entries than the tree has);
#   sha256sum                   find -type f -print0 | xargs -0 -n500
#                               -P$(nproc) sha256sum: hashing, no metadata;
#   vouch drift snapshot, check `vouch drift snapshot DIR --log LOG --key K`,
#                               `vouch drift check DIR --log LOG --pub K.pub`
#                               (and `--shortcut` when VOUCH_SHORTCUT=1).
# Prints one table: wall s, files/s, MB/s, peak RSS MiB, and time ratios
# against `aide --check` and `vouch drift check`. Files and bytes are the
# tree's regular files, symlinks not followed. Before each timed run the
# page cache is dropped when that is allowed (root, not in a container);
# otherwise the tree is read once first and the output says "warm cache".
#
#   bench/drift.sh                            # /usr, best of 1
#   bench/drift.sh --tree /usr/share --runs 3
#   bench/drift.sh --warm                     # never drop caches
#   VOUCH=/path/to/vouch VOUCH_SHORTCUT=1 bench/drift.sh
#
# Installs aide, hashdeep and time with apt-get when missing (needs root).
# Without VOUCH, builds vouch (cargo build --release). Without a `drift`
# subcommand in that vouch, prints the peers' numbers only. Data goes to
# /tmp/vouch-bench-drift (VOUCH_BENCH_DIR), removed at the end (--keep).
set -euo pipefail
cd "$(dirname "$0")/.."

missing=()
command -v aide >/dev/null || missing+=(aide)
command -v hashdeep >/dev/null || missing+=(hashdeep)
[ -x /usr/bin/time ] || missing+=(time)
if ((${#missing[@]})); then
    echo "installing ${missing[*]} ..." >&2
    if [ "$(id -u)" -eq 0 ]; then
        DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${missing[@]}" >&2
    else
        sudo DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${missing[@]}" >&2
    fi
fi

if [ -z "${VOUCH:-}" ]; then
    cargo build --release --quiet
    VOUCH="${CARGO_TARGET_DIR:-target}/release/vouch"
fi
exec python3 bench/drift_bench.py --vouch "$VOUCH" "$@"
