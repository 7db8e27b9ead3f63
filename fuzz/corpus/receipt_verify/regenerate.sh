#!/usr/bin/env bash
# Rebuilds the seed receipts of the receipt_verify fuzz target with the
# vouch binary and the committed test-only key fuzz.key (see README.md).
# The seeds are not byte-for-byte reproducible (record timestamps, the
# temporary anchor directory and S3 version ids differ per run); their
# verdicts are, and tests/receipt_fuzz_replay.rs checks them by file-name
# prefix.
#
#   cargo build && fuzz/corpus/receipt_verify/regenerate.sh
#
# VOUCH=path/to/vouch overrides the binary (default: target/debug/vouch
# below CARGO_TARGET_DIR or the repository). The S3 seed needs moto's
# server from .venv (scripts/setup-test-env.sh).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../../.." && pwd)"
vouch="${VOUCH:-${CARGO_TARGET_DIR:-$root/target}/debug/vouch}"
if [ ! -x "$vouch" ]; then
    echo "regenerate.sh: $vouch not found: run cargo build (or set VOUCH)" >&2
    exit 2
fi
moto="$root/.venv/bin/moto_server"
if [ ! -x "$moto" ]; then
    echo "regenerate.sh: $moto not found: run scripts/setup-test-env.sh" >&2
    exit 2
fi

tmp="$(mktemp -d)"
moto_pid=""
cleanup() {
    [ -n "$moto_pid" ] && kill "$moto_pid" 2>/dev/null || true
    chattr -R -i "$tmp" 2>/dev/null || true
    rm -rf "$tmp"
}
trap cleanup EXIT

# The key file is world-readable in git; vouch gets a private copy.
install -m 600 "$here/fuzz.key" "$tmp/key"
key="$tmp/key"
append() { "$vouch" append "$1" --key "$key" "$2" >/dev/null; }
receipt() { "$vouch" receipt "$1" --seq "$2" "${@:4}" --out "$here/$3" 2>/dev/null; }

# Log 1: records 0-4; anchored to two dir targets (checkpoint 5 of size
# 5, anchor record 6 with two entries, covering checkpoint 7); record 8;
# checkpoint 9 of size 9.
log="$tmp/dir.jsonl"
for i in 0 1 2 3 4; do append "$log" "{\"i\":$i}"; done
mkdir "$tmp/worm" "$tmp/worm2"
"$vouch" anchor "$log" --key "$key" --to "dir:$tmp/worm" --to "dir:$tmp/worm2" >/dev/null
append "$log" '{"i":5}'
"$vouch" checkpoint "$log" --key "$key" >/dev/null
receipt "$log" 2 anchor-not-checked-dir.json
receipt "$log" 0 record-not-checked-hash-only.json --hash-only
receipt "$log" 8 signed-not-anchored-event.json
receipt "$log" 6 signed-not-anchored-anchor-record.json

# Log 2: records 0-2 anchored to S3 on a local moto server (COMPLIANCE,
# legal hold).
port="$("$root/.venv/bin/python" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
endpoint="http://127.0.0.1:$port"
"$moto" -H 127.0.0.1 -p "$port" >/dev/null 2>&1 &
moto_pid=$!
export AWS_ACCESS_KEY_ID=testing AWS_SECRET_ACCESS_KEY=testing AWS_REGION=us-east-1
export AWS_EC2_METADATA_DISABLED=true AWS_CONFIG_FILE=/nonexistent AWS_SHARED_CREDENTIALS_FILE=/nonexistent
for _ in $(seq 100); do
    if "$root/.venv/bin/python" -c "
import boto3
boto3.client('s3', endpoint_url='$endpoint', region_name='us-east-1').create_bucket(Bucket='fuzz-seeds', ObjectLockEnabledForBucket=True)
" 2>/dev/null; then
        break
    fi
    sleep 0.2
done
log="$tmp/s3.jsonl"
for i in 0 1 2; do append "$log" "{\"i\":$i}"; done
"$vouch" anchor "$log" --key "$key" --to s3://fuzz-seeds/logs --endpoint "$endpoint" \
    --retain-days 1 --legal-hold >/dev/null
receipt "$log" 1 anchor-not-checked-s3.json

ls -l "$here"/*.json
