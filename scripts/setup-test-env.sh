#!/usr/bin/env bash
# Installs what vouch's integration tests need beside cargo. Each section
# installs one component and does nothing when it is already there, so the
# script can be run again at any time; it is quiet on success except for a
# line per component it actually installed.
#
# - moto's standalone S3 server (moto[server]) in .venv in the repository
#   root, started on 127.0.0.1 by tests/anchor.rs;
# - kubernetes-validate in the same .venv: tests/deploy.rs validates the
#   manifests in deploy/kubernetes/ against the Kubernetes schemas with it;
# - the Debian packages `minisign` (tests/minisign.rs checks vouch's
#   minisign signatures with it), `mtree-netbsd` (the `mtree` binary), and
#   `slurm-wlm` and `munge` (tests/deploy.rs runs deploy/slurm/ on a
#   one-host cluster that scripts/slurm-local.sh starts).
#   Installed with apt-get as root; `apt-get update` runs only when the
#   first install attempt fails.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

# ------------------------------------------------------------ moto[server]
setup_moto() {
    local venv="$root/.venv"
    if [ -x "$venv/bin/moto_server" ]; then
        return 0
    fi
    local python="${PYTHON:-python3}"
    if ! command -v "$python" >/dev/null 2>&1; then
        echo "setup-test-env: $python not found; install Python 3.9+ (moto's S3 server needs it)" >&2
        exit 2
    fi
    "$python" -m venv "$venv"
    "$venv/bin/pip" install --quiet --upgrade pip
    "$venv/bin/pip" install --quiet "moto[server]>=5,<6"
    "$venv/bin/moto_server" --help >/dev/null
    echo "setup-test-env: installed moto[server] into $venv"
}

# ------------------------------------------------------------ kubernetes-validate
# The schemas ship inside the package (no network at test time); 1.30 and
# later know Indexed Jobs' backoffLimitPerIndex and podFailurePolicy's
# FailIndex.
setup_kubernetes_validate() {
    local venv="$root/.venv"
    if [ -x "$venv/bin/kubernetes-validate" ]; then
        return 0
    fi
    "$venv/bin/pip" install --quiet "kubernetes-validate>=1.30"
    "$venv/bin/kubernetes-validate" --help >/dev/null
    echo "setup-test-env: installed kubernetes-validate into $venv"
}

# ------------------------------------------------------------ Debian packages
# apt_install PACKAGE... : installs the packages quietly, running
# `apt-get update` and trying once more only if the first attempt fails
# (a fresh container has no package lists).
apt_install() {
    if ! command -v apt-get >/dev/null 2>&1; then
        echo "setup-test-env: apt-get not found; install $* with your package manager" >&2
        exit 2
    fi
    local log
    log="$(mktemp)"
    if ! DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@" >"$log" 2>&1; then
        if ! { apt-get update -qq &&
            DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@"; } >"$log" 2>&1; then
            cat "$log" >&2
            rm -f "$log"
            echo "setup-test-env: cannot install $*" >&2
            exit 2
        fi
    fi
    rm -f "$log"
    echo "setup-test-env: installed $*"
}

setup_debian_packages() {
    # binary:package pairs; a package is installed only when its binary is missing.
    local missing=() pair
    # (slurm-wlm brings slurmctld, slurmd and the clients.)
    for pair in minisign:minisign mtree:mtree-netbsd munged:munge \
        slurmctld:slurm-wlm slurmd:slurm-wlm sbatch:slurm-wlm; do
        if ! command -v "${pair%%:*}" >/dev/null 2>&1 &&
            [[ " ${missing[*]} " != *" ${pair#*:} "* ]]; then
            missing+=("${pair#*:}")
        fi
    done
    if [ "${#missing[@]}" -gt 0 ]; then
        apt_install "${missing[@]}"
    fi
}

setup_moto
setup_kubernetes_validate
setup_debian_packages

# ------------------------------------------------------------ more components
# Further sections go here, one guarded call each (e.g. the node peers set
# up by scripts/setup-node-peers.sh).
