#!/usr/bin/env bash
# The fleet verdict from the shard reports of deploy/slurm/verify-array.sh:
# `vouch verify --merge` prints the report one unsharded run would have
# printed, and exits with its exit code.
#
# Submit it with `--dependency=afterany:JOBID` (the array's job id), not
# `afterok`: a shard that rejects evidence exits 1, and with afterok the
# merge would never run on exactly the runs that matter.
#
#   sbatch --dependency=afterany:$jid --export=ALL,VOUCH_REPORTS=/shared/vouch/run-42 deploy/slurm/merge.sh
#
# Environment: VOUCH_REPORTS (the shard reports' directory), VOUCH (the
# binary, default `vouch`). Writes $VOUCH_REPORTS/fleet.json and prints the
# table to the job's output file.
#
# Exit codes: 0 the fleet verified, 1 evidence rejected, 2 no verdict: a
# shard is missing (its task failed with exit 2 every attempt: resubmit that
# index with VOUCH_SHARDS=N, then this script), duplicated, or from another
# run (a different listing, options or keys).
#SBATCH --job-name=vouch-merge
#SBATCH --output=vouch-merge-%j.out
set -uo pipefail

: "${VOUCH_REPORTS:?set VOUCH_REPORTS (the directory of the shard reports)}"
vouch="${VOUCH:-vouch}"

shopt -s nullglob
shards=("$VOUCH_REPORTS"/shard-[0-9]*.json)
shopt -u nullglob
if [ "${#shards[@]}" -eq 0 ]; then
    echo "merge: no shard reports in $VOUCH_REPORTS" >&2
    exit 2
fi

fleet="$VOUCH_REPORTS/fleet.json"
"$vouch" verify --merge "${shards[@]}" --format json >"$fleet.tmp"
rc=$?
if [ "$rc" -eq 0 ] || [ "$rc" -eq 1 ]; then
    mv "$fleet.tmp" "$fleet" || exit 2
    # The same verdict, for people reading the job's output.
    "$vouch" verify --merge "${shards[@]}" --format table
fi
exit "$rc"
