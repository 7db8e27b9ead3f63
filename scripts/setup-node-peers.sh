#!/usr/bin/env bash
# Installs the Node peers vouch's tests run against (tests/peers/*/, pinned
# by their committed package-lock.json): the offline Sigstore bundle
# verifier in tests/peers/sigstore (@sigstore/verify), used by
# tests/sigstore_export.rs, the MCP servers and clients in tests/peers/mcp,
# used by tests/drift_mcp_client.rs and the wrap tests, and the official MCP
# conformance suite with its bridge and a Node 22 binary in
# tests/peers/conformance, used by tests/mcp_conformance.rs. Idempotent: runs
# `npm ci` only when node_modules is missing or was installed from another
# lock file.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

for tool in node npm; do
    if ! command -v "$tool" >/dev/null 2>&1; then
        echo "setup-node-peers: $tool not found; install Node.js 20 or later with npm (the Sigstore peer tests need it)" >&2
        exit 2
    fi
done

for dir in "$root"/tests/peers/*/; do
    [ -f "$dir/package-lock.json" ] || continue
    stamp="$dir/node_modules/.vouch-lock-sha256"
    want="$(sha256sum "$dir/package-lock.json" | cut -d' ' -f1)"
    if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
        continue
    fi
    (cd "$dir" && npm ci --silent --no-audit --no-fund --engine-strict=false)
    echo "$want" >"$stamp"
    echo "setup-node-peers: installed $(basename "$dir") peer ($(node --version))"
done
