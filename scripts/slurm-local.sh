#!/usr/bin/env bash
# A one-host Slurm cluster on localhost, for tests (tests/deploy.rs runs the
# real deploy/slurm/ scripts on it). Debian 12's slurm-wlm 22.05 and munge
# (installed by scripts/setup-test-env.sh); run as root.
#
#   scripts/slurm-local.sh start    configure and start munged, slurmctld and
#                                   slurmd; wait until the node is idle
#   scripts/slurm-local.sh stop     stop what `start` started
#   scripts/slurm-local.sh status   exit 0 when the node answers and is usable
#   scripts/slurm-local.sh env      print SLURM_CONF=... for sbatch/squeue/sinfo
#
# Everything lives in one directory, $VOUCH_SLURM_DIR (default
# /var/lib/vouch-slurm-local): its own munge key and socket, slurm.conf,
# state, spool, logs and pid files. The system's /etc/slurm and /etc/munge
# are not touched, so clients need SLURM_CONF=$VOUCH_SLURM_DIR/slurm.conf
# (the `env` command prints it). `start` is idempotent: a cluster that
# already answers is left running.
#
# What a container needs (found by trying Debian 12's 22.05.8 here): no
# cgroups (proctrack/linuxproc, task/none, jobacct_gather/none), root as
# SlurmUser and SlurmdUser (no slurm-owned directories), `slurmd -N
# localhost` because the node is not named after the host, and
# ReturnToService=2 so a restarted slurmd comes back idle, not DOWN.
set -euo pipefail

dir="${VOUCH_SLURM_DIR:-/var/lib/vouch-slurm-local}"
conf="$dir/slurm.conf"
socket="$dir/munge/munge.socket.2"
# Ports away from Slurm's defaults (6817/6818) so a real cluster's daemons
# on the same machine are not disturbed; override when these are taken.
ctld_port="${VOUCH_SLURM_CTLD_PORT:-16817}"
slurmd_port="${VOUCH_SLURM_SLURMD_PORT:-16818}"

die() {
    echo "slurm-local: $*" >&2
    exit 2
}

need() {
    local b
    for b in "$@"; do
        command -v "$b" >/dev/null 2>&1 ||
            die "$b not found: install slurm-wlm and munge (scripts/setup-test-env.sh)"
    done
}

# The node's CPUs and memory as slurmd sees them (slurmd -C), so the
# configuration never claims more than the machine has (the node would be
# drained with "Low RealMemory").
node_line() {
    local line cpus mem
    line="$(slurmd -C | head -n 1)"
    cpus="$(sed -n 's/.*CPUs=\([0-9]*\).*/\1/p' <<<"$line")"
    mem="$(sed -n 's/.*RealMemory=\([0-9]*\).*/\1/p' <<<"$line")"
    if [ -z "$cpus" ] || [ -z "$mem" ]; then
        die "cannot read CPUs/RealMemory from 'slurmd -C': $line"
    fi
    echo "NodeName=localhost NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=$mem State=UNKNOWN"
}

write_config() {
    mkdir -p "$dir/munge" "$dir/state" "$dir/spool" "$dir/log"
    chmod 0700 "$dir/munge"
    if [ ! -s "$dir/munge/munge.key" ]; then
        # 1024 random bits, as mungekey(8) makes; private to root.
        (umask 077 && dd if=/dev/urandom of="$dir/munge/munge.key" bs=128 count=1 status=none)
    fi
    cat >"$conf" <<EOF
# Written by scripts/slurm-local.sh: a one-host test cluster. Do not edit.
ClusterName=vouchtest
SlurmctldHost=localhost(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$socket
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd.log
# No cgroups: containers have none usable.
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
MpiDefault=none
SwitchType=switch/none
ReturnToService=2
# Short timers: tests wait on these, never on a sleep.
SchedulerParameters=sched_interval=1
MinJobAge=300
KillWait=5
InactiveLimit=0
$(node_line)
PartitionName=debug Nodes=localhost Default=YES MaxTime=INFINITE State=UP
EOF
}

munge_ok() {
    munge --socket="$socket" -n 2>/dev/null | unmunge --socket="$socket" >/dev/null 2>&1
}

# The node answers and can run jobs: idle, mixed or allocated (a test's job
# may already be running on it), not down or drained.
node_ready() {
    local state
    # slurmctld remembers the node from its last run; only a live slurmd runs jobs.
    pid_alive "$dir/slurmd.pid" || return 1
    state="$(SLURM_CONF="$conf" sinfo -h -N -n localhost -o '%t' 2>/dev/null)" || return 1
    case "$state" in
        idle | mix | alloc | comp) return 0 ;;
        *) return 1 ;;
    esac
}

# wait_for SECONDS CHECK... : runs CHECK every 0.2 s until it succeeds or
# SECONDS have passed (the daemons give no readiness signal to wait on).
wait_for() {
    local limit="$1" i=0
    shift
    while ! "$@"; do
        i=$((i + 1))
        [ "$i" -le $((limit * 5)) ] || return 1
        sleep 0.2
    done
}

pid_alive() {
    [ -s "$1" ] && kill -0 "$(cat "$1")" 2>/dev/null
}

start() {
    [ "$(id -u)" = 0 ] || die "start needs root (slurmd runs jobs as their users)"
    need munged munge unmunge slurmctld slurmd sinfo
    if [ -s "$conf" ] && munge_ok && node_ready; then
        return 0
    fi
    write_config
    if ! munge_ok; then
        # --force: munged refuses to run as root otherwise.
        munged --force --socket="$socket" --key-file="$dir/munge/munge.key" \
            --pid-file="$dir/munge/munged.pid" --log-file="$dir/log/munged.log" \
            --seed-file="$dir/munge/munged.seed"
        wait_for 10 munge_ok || die "munged did not answer on $socket (see $dir/log/munged.log)"
    fi
    if ! pid_alive "$dir/slurmctld.pid"; then
        # -i: ignore state files from an earlier run that cannot be read.
        SLURM_CONF="$conf" slurmctld -i
    fi
    if ! pid_alive "$dir/slurmd.pid"; then
        SLURM_CONF="$conf" slurmd -N localhost
    fi
    if ! wait_for 30 node_ready; then
        SLURM_CONF="$conf" sinfo -N -l >&2 || true
        tail -n 20 "$dir/log/slurmctld.log" "$dir/log/slurmd.log" >&2 || true
        die "the node did not become idle within 30 s (logs in $dir/log)"
    fi
    echo "slurm-local: cluster up (SLURM_CONF=$conf)"
}

stop_pid() {
    local f="$1" pid i
    pid_alive "$f" || return 0
    pid="$(cat "$f")"
    kill "$pid"
    for i in $(seq 50); do
        kill -0 "$pid" 2>/dev/null || return 0
        sleep 0.2
    done
    kill -9 "$pid" 2>/dev/null || true
}

stop() {
    stop_pid "$dir/slurmd.pid"
    stop_pid "$dir/slurmctld.pid"
    stop_pid "$dir/munge/munged.pid"
}

case "${1:-}" in
    start) start ;;
    stop) stop ;;
    status)
        if [ -s "$conf" ] && munge_ok && node_ready; then
            echo "slurm-local: up (SLURM_CONF=$conf)"
        else
            echo "slurm-local: not running" >&2
            exit 1
        fi
        ;;
    env) echo "SLURM_CONF=$conf" ;;
    *)
        echo "usage: $0 start|stop|status|env" >&2
        exit 2
        ;;
esac
