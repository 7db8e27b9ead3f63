#!/usr/bin/env bash
# What one Ed25519 checkpoint signature costs per log (issue 27: the
# fleet's floor). A stand-alone crate in bench/ed25519 with the same crate
# versions as vouch and, through .cargo/config.toml, the same curve25519
# backend; prints microseconds per log. Run it on a quiet machine.
set -euo pipefail
cd "$(dirname "$0")/ed25519"
cargo run --release --quiet
