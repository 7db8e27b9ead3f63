#!/usr/bin/env bash
# Detection quality and speed of `vouch scan` (the static scan of MCP tool
# definitions, `vouch::vet::scan`) over the labelled evaluation set
# tests/vectors/vet/fixtures.jsonl (see its README).
#
# For every fixture, writes a temp file {"tools":[TOOL]} (or
# {"instructions":TEXT} for a server-instructions fixture) and runs
# `vouch scan FILE --format json` (block_at high, the default). The verdict
# is the report's: blocked / flagged / pass, cross-checked against the exit
# status (1 when something is blocked, 0 otherwise, 2 on error; a mismatch
# or an error is counted and listed). Prints:
#   - the ruleset version and digest the reports name;
#   - per family (poisoned) and for the benign set, per split (dev, test,
#     all): fixtures, blocked, flagged (not blocked), missed, and the
#     detection rate (blocked+flagged)/n for poisoned, the false-block and
#     false-flag rates for benign;
#   - which rule ids fired per family (fixtures per rule; advisory ones
#     marked "adv");
#   - the benign fixtures that were blocked and the poisoned ones missed;
#   - timing: the whole per-fixture loop (one process per fixture, fixtures/s,
#     p50/p99 ms per process) and one batch file holding every tool
#     fixture (names suffixed with the fixture id so they stay unique),
#     scanned in one process (tools/s).
#
#   bench/vet.sh                         # all fixtures, sequential
#   bench/vet.sh --split test            # only the test split
#   bench/vet.sh --jobs 8 --verbose      # 8 scans in flight; list every miss
#   bench/vet.sh --json out.json         # also write the per-fixture results
#   VOUCH=/path/to/vouch bench/vet.sh    # no build
#
# Without VOUCH, builds the release binary (cargo build --release --locked,
# into CARGO_TARGET_DIR when set). Temp files go to a directory under
# $TMPDIR, removed at the end (--keep keeps it).
set -euo pipefail
cd "$(dirname "$0")/.."
usage="usage: bench/vet.sh [--split dev|test|all] [--jobs N] [--fixtures FILE] [--json OUT] [--verbose] [--keep]"
args=()
while [ $# -gt 0 ]; do
  case "$1" in
    --split|--jobs|--fixtures|--json) [ $# -ge 2 ] || { echo "$usage" >&2; exit 2; }; args+=("$1" "$2"); shift 2 ;;
    --verbose|--keep) args+=("$1"); shift ;;
    -h|--help) echo "$usage"; exit 0 ;;
    *) echo "$usage" >&2; exit 2 ;;
  esac
done
if [ -z "${VOUCH:-}" ]; then
  cargo build --release --locked --quiet
  VOUCH="${CARGO_TARGET_DIR:-target}/release/vouch"
fi
[ -x "$VOUCH" ] || { echo "bench/vet.sh: no vouch binary at $VOUCH" >&2; exit 2; }
exec python3 bench/vet_bench.py --vouch "$VOUCH" "${args[@]}"
