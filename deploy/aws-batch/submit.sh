#!/usr/bin/env bash
# A sharded fleet audit on AWS Batch: an array job of N children, child I
# running `vouch verify SOURCE --shard I/N --format json`, then a merge job
# that depends on the whole array and prints the fleet verdict.
#
# The image is deploy/Dockerfile's `batch` target (no ENTRYPOINT: Batch's
# command is Docker's CMD), pushed to ECR; register the definition once, then submit each run:
#   aws batch register-job-definition --cli-input-json file://deploy/aws-batch/job-definition.json
#   deploy/aws-batch/submit.sh QUEUE s3://audit-logs/prod/ 16
#
# Reports go to EFS, not S3: the image stays vouch alone (no AWS CLI, no
# Python to patch), every engine uses the same `> shard-I.json` wrapper
# (Kubernetes and Slurm use a shared volume too), and the merge reads the
# files where they are. The job definition mounts the file system at
# /reports (read-write) and /keys (read-only: the trusted keys,
# /keys/fleet.keys); each run writes into /reports/$VOUCH_RUN/.
#
# Exit codes and retries (job-definition.json, retryStrategy): exit 1 ->
# EXIT (rejected evidence is final, re-running cannot change it), any other
# non-zero exit -> RETRY, 3 attempts in all.
#
# One twist, from AWS Batch's rules: a job whose dependency FAILED fails
# itself without running ("If any of the job dependencies fail, the
# dependent job automatically transitions from PENDING to FAILED", Batch
# user guide, Job dependencies). A shard that rejected evidence must still
# reach the merge, so a child exits 0 once vouch gave a verdict (0 or 1)
# and its report is on EFS: SUCCEEDED means "report stored", not
# "verified". Only exit 2 fails a child (after 3 attempts); then the merge
# cannot run, and it could give no verdict anyway. The verdict is the merge
# job's: SUCCEEDED verified, FAILED with exit 1 rejected (never retried),
# FAILED with exit 2 or a dependency failure: no verdict, look at the
# children.
set -euo pipefail

if [ "$#" -ne 3 ]; then
    echo "usage: $0 QUEUE s3://BUCKET/PREFIX/ N   (2 <= N <= 10000)" >&2
    exit 2
fi
queue="$1" source="$2" shards="$3"
definition="${VOUCH_JOB_DEFINITION:-vouch}"
run="${VOUCH_RUN:-$(date -u +%Y%m%dT%H%M%SZ)}"

# Batch hands each child its index (AWS_BATCH_JOB_ARRAY_INDEX), never the
# array's size: N travels as VOUCH_SHARDS. An array has 2 to 10,000
# children; for N = 1, run `vouch verify` without --shard.
env_json="[{\"name\":\"VOUCH_SOURCE\",\"value\":\"$source\"},{\"name\":\"VOUCH_SHARDS\",\"value\":\"$shards\"},{\"name\":\"VOUCH_RUN\",\"value\":\"$run\"}]"

array_id="$(aws batch submit-job \
    --job-name "vouch-verify-$run" \
    --job-queue "$queue" \
    --job-definition "$definition" \
    --array-properties "size=$shards" \
    --container-overrides "{\"environment\":$env_json}" \
    --query jobId --output text)"

# The merge: same image and retry policy, another command. It depends on
# the array's parent id, so it starts once every child has finished.
# (One line and no double quotes, so it sits in the JSON as it is;
# VOUCH_RUN is a UTC timestamp, with no characters a shell would split.)
# shellcheck disable=SC2016 # expanded by the container's shell, not here
merge_cmd='d=/reports/$VOUCH_RUN; vouch verify --merge $d/shard-*.json --format json > $d/fleet.json.tmp; rc=$?; if [ $rc -le 1 ]; then mv $d/fleet.json.tmp $d/fleet.json || exit 2; vouch verify --merge $d/shard-*.json --format table; fi; exit $rc'
overrides="{\"command\":[\"sh\",\"-c\",\"$merge_cmd\"],\"environment\":$env_json}"

merge_id="$(aws batch submit-job \
    --job-name "vouch-merge-$run" \
    --job-queue "$queue" \
    --job-definition "$definition" \
    --depends-on "jobId=$array_id" \
    --container-overrides "$overrides" \
    --query jobId --output text)"

echo "run $run: shards $array_id (size $shards), merge $merge_id"
echo "verdict: aws batch describe-jobs --jobs $merge_id --query 'jobs[0].[status,container.exitCode]'"
echo "report:  /reports/$run/fleet.json on the EFS file system"
