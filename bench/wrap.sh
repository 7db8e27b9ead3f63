#!/usr/bin/env bash
# Per-call overhead of `vouch wrap`, side by side with the same client
# talking to the same server directly, in one run.
#
# Client: tests/peers/mcp/bench-client.mjs (raw JSON-RPC over the child's
# stdio, no SDK, so its own cost is small); server: fast-server.mjs (answers
# tools/call at once). Policy: an allow rule for the tool plus a block rule
# with a path matcher that does not apply, so every call is evaluated,
# redacted, recorded (tool_call + tool_result) and checkpointed (every 1000
# records or 5 s) as in production. Runs, each --runs times (median shown):
#   direct        client -> server, one call at a time
#   wrap (disk)   client -> vouch wrap -> server, log on the disk the bench
#                 runs on (BENCH_DIR, default a temp dir under $TMPDIR)
#   wrap (tmpfs)  the same with the log on /dev/shm: the wrapper's own cost,
#                 without the device's fsync latency
#   and the same three with --concurrency C calls in flight (throughput).
# Also measures the fdatasync latency of the log's disk (p50/p99 of 500
# appends of a 300-byte line), since a decision must be durable before the
# client sees the result: on a disk whose fdatasync takes longer than the
# server's work, the added latency is that fdatasync.
# Prints a table of p50/p90/p99 µs and calls/s, and the added latency
# (wrap − direct) at p50/p99 with the ratio.
#
#   bench/wrap.sh                        # 20000 calls, 3 runs, C=32
#   bench/wrap.sh --calls 5000 --runs 1
#   VOUCH=/path/to/vouch BENCH_DIR=/mnt/nvme bench/wrap.sh
set -euo pipefail
cd "$(dirname "$0")/.."
calls=20000 runs=3 conc=32
while [ $# -gt 0 ]; do
  case "$1" in
    --calls) calls=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    --concurrency) conc=$2; shift 2 ;;
    *) echo "usage: bench/wrap.sh [--calls N] [--runs N] [--concurrency C]" >&2; exit 2 ;;
  esac
done
VOUCH=${VOUCH:-target/release/vouch}
if [ ! -x "$VOUCH" ]; then cargo build --release --locked; fi
[ -d tests/peers/mcp/node_modules ] || scripts/setup-node-peers.sh
dir=$(mktemp -d "${BENCH_DIR:-${TMPDIR:-/tmp}}/vouch-wrap-bench.XXXXXX")
shm=$(mktemp -d /dev/shm/vouch-wrap-bench.XXXXXX 2>/dev/null || mktemp -d)
trap 'rm -rf "$dir" "$shm"' EXIT
"$VOUCH" keygen --origin bench.example/mcp --out "$dir/k" >/dev/null
cat > "$dir/policy.toml" <<'TOML'
version = 1
default = "block"
roots = ["/srv/project"]

[[rule]]
id = "no-writes-outside"
tools = ["write_*"]
action = "block"
path_outside = ["/path"]

[[rule]]
id = "echo"
tools = ["echo"]
action = "allow"
TOML
python3 bench/wrap_bench.py "$VOUCH" "$dir" "$shm" "$calls" "$runs" "$conc"
