#!/usr/bin/env bash
# One shard of a fleet audit, as a Slurm array task: task I of N runs
# `vouch verify SOURCE --shard I/N --format json` and keeps its report as
# $VOUCH_REPORTS/shard-I.json, for deploy/slurm/merge.sh.
#
#   jid=$(sbatch --parsable --array=0-15 \
#           --export=ALL,VOUCH_SOURCE=s3://audit-logs/prod/,VOUCH_PUB=/etc/vouch/fleet.keys,VOUCH_REPORTS=/shared/vouch/run-42 \
#           deploy/slurm/verify-array.sh)
#   sbatch --dependency=afterany:${jid%;*} --export=ALL,VOUCH_REPORTS=/shared/vouch/run-42 deploy/slurm/merge.sh
#
# Environment:
#   VOUCH_SOURCE   what to verify: s3://BUCKET/PREFIX/ (or a path every node sees)
#   VOUCH_PUB      the trusted keys file (vouch verify --pub)
#   VOUCH_REPORTS  a directory on a file system every node and the merge job see
#   VOUCH_SHARDS   N; default SLURM_ARRAY_TASK_COUNT. Set it when you resubmit
#                  some indices only (`--array=5`), or the count would be 1
#   VOUCH_ENDPOINT an S3-compatible endpoint (--endpoint); the AWS credential
#                  chain (AWS_*, profile, instance role) is used as it is
#   VOUCH_ATTEMPTS tries on an operational error (exit 2), default 3, the
#                  k-th retry after k * VOUCH_RETRY_DELAY seconds (default 30)
#   VOUCH          the vouch binary, default `vouch` from PATH
#
# vouch verifies on every CPU the task is given: ask for what one shard
# should use with `sbatch --cpus-per-task=C` (or --exclusive for whole
# nodes); no default here, since a request larger than any node stays
# pending for ever.
#
# Exit codes, which the merge and `sacct` see: 0 every log of the shard
# verified, 1 evidence rejected, 2 an operational error. Slurm retries
# nothing by exit code (`--requeue` only covers node failure and
# preemption), so this script retries exit 2 itself, up to VOUCH_ATTEMPTS
# times. Exit 1 is final: running again cannot change a verdict. A shard
# that exits 1 has still written its complete report, which the merge needs.
#SBATCH --job-name=vouch-verify
#SBATCH --array=0-15
#SBATCH --output=vouch-verify-%A_%a.out
set -uo pipefail

: "${VOUCH_SOURCE:?set VOUCH_SOURCE (s3://BUCKET/PREFIX/)}"
: "${VOUCH_PUB:?set VOUCH_PUB (the trusted keys file)}"
: "${VOUCH_REPORTS:?set VOUCH_REPORTS (a shared report directory)}"
: "${SLURM_ARRAY_TASK_ID:?run as an array job: sbatch --array=0-N-1}"
vouch="${VOUCH:-vouch}"
index="$SLURM_ARRAY_TASK_ID"
count="${VOUCH_SHARDS:-${SLURM_ARRAY_TASK_COUNT:-}}"
attempts="${VOUCH_ATTEMPTS:-3}"

if [ -z "$count" ] || [ "$index" -ge "$count" ]; then
    echo "verify-array: shard $index of '${count}': set VOUCH_SHARDS to the array's size" >&2
    exit 2
fi
args=(verify "$VOUCH_SOURCE" --pub "$VOUCH_PUB" --shard "$index/$count" --format json)
if [ -n "${VOUCH_ENDPOINT:-}" ]; then
    args+=(--endpoint "$VOUCH_ENDPOINT")
fi

mkdir -p "$VOUCH_REPORTS" || exit 2
report="$VOUCH_REPORTS/shard-$index.json"
# A report left by an earlier run must not stand in for this one.
rm -f "$report"

rc=2
for attempt in $(seq 1 "$attempts"); do
    # Plain redirection keeps vouch's exit code (no pipeline, no tee), and
    # the report appears under its final name only once it is complete.
    "$vouch" "${args[@]}" >"$report.tmp"
    rc=$?
    if [ "$rc" -eq 0 ] || [ "$rc" -eq 1 ]; then
        mv "$report.tmp" "$report" || exit 2
        exit "$rc"
    fi
    echo "verify-array: shard $index/$count: operational error (exit $rc), attempt $attempt of $attempts" >&2
    if [ "$attempt" -lt "$attempts" ]; then
        sleep $((attempt * ${VOUCH_RETRY_DELAY:-30}))
    fi
done
# No verdict: keep what vouch said for the operator; the missing
# shard-I.json makes the merge refuse (exit 2) rather than report a fleet
# with a hole in it.
mv "$report.tmp" "$VOUCH_REPORTS/failed-shard-$index.json" 2>/dev/null
# Anything but 0 and 1 (2, a signal, a missing binary) is operational.
exit 2
