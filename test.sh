#!/usr/bin/env bash
# Runs the whole test suite: formatting, lints, unit and integration tests,
# fuzz corpora replay. Installs what the tests need first (see
# scripts/setup-test-env.sh). Under CI=true a missing component is a failure,
# never a skip.
set -euo pipefail
cd "$(dirname "$0")"

if [ -x scripts/setup-test-env.sh ]; then
  scripts/setup-test-env.sh
fi
# The Node peers (tests/peers/*, e.g. @sigstore/verify for
# tests/sigstore_export.rs); without node the peer tests skip, except in CI.
if ! scripts/setup-node-peers.sh; then
  echo "test.sh: the Node peers could not be installed" >&2
  [ "${CI:-}" = "true" ] && exit 1
fi
if ! command -v openssl >/dev/null; then
  echo "test.sh: openssl is required by the TSA tests" >&2
  [ "${CI:-}" = "true" ] && exit 1
fi

# tests/deploy.rs starts the one-host Slurm cluster it needs itself
# (scripts/slurm-local.sh start: idempotent, about a second) and leaves it
# running for the next run; `scripts/slurm-local.sh stop` stops it.
cargo fmt --all -- --check
cargo clippy --all-targets --locked -- -D warnings
cargo test --all-targets --locked
cargo test --doc --locked
