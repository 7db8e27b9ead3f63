#!/usr/bin/env bash
# Regenerates the example fleet with vouch itself: four signed logs, the
# keyset that verifies them, and one log tampered after the fact.
# The private keys are thrown away; only the public keyset is kept.
set -euo pipefail
cd "$(dirname "$0")"
vouch=${VOUCH:-../target/release/vouch}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
rm -f fleet/*.jsonl keys.pub
mkdir -p fleet
: > keys.pub
for host in web-1 web-2 db-1 ci-runner; do
  origin="example.com/$host"
  "$vouch" keygen --origin "$origin" --out "$work/$host.key" 2>/dev/null >> keys.pub
  log="fleet/$host.jsonl"
  for day in 01 02 03; do
    printf '%s\n' \
      "{\"event\":\"login\",\"user\":\"alice\",\"host\":\"$host\",\"day\":\"2026-11-$day\"}" \
      "{\"event\":\"deploy\",\"service\":\"api\",\"version\":\"1.4.$day\",\"approved_by\":\"bob\"}" \
      "{\"event\":\"config_change\",\"key\":\"max_connections\",\"from\":100,\"to\":250}" \
      "{\"event\":\"logout\",\"user\":\"alice\"}" \
      | "$vouch" append "$log" --key "$work/$host.key" --kind audit > /dev/null
    "$vouch" checkpoint "$log" --key "$work/$host.key" > /dev/null
  done
done
# Tamper: someone quietly edits an approved deploy in db-1's history.
sed -i '7s/"approved_by":"bob"/"approved_by":"mallory"/' fleet/db-1.jsonl
echo "regenerated examples/fleet and examples/keys.pub"
