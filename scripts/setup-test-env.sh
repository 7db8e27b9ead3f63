#!/usr/bin/env bash
# Creates .venv in the repository root with the test servers vouch's
# integration tests start on 127.0.0.1: moto's standalone S3 server
# (moto[server]), used by tests/anchor.rs. Idempotent: does nothing when
# .venv/bin/moto_server already exists.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="$root/.venv"
if [ -x "$venv/bin/moto_server" ]; then
    exit 0
fi
python="${PYTHON:-python3}"
if ! command -v "$python" >/dev/null 2>&1; then
    echo "setup-test-env: $python not found; install Python 3.9+ (moto's S3 server needs it)" >&2
    exit 2
fi
"$python" -m venv "$venv"
"$venv/bin/pip" install --quiet --upgrade pip
"$venv/bin/pip" install --quiet "moto[server]>=5,<6"
"$venv/bin/moto_server" --help >/dev/null
echo "setup-test-env: installed moto[server] into $venv"
