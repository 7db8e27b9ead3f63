"""Times `vouch anchor verify` over a log with N S3 anchors on moto:
without --state, the first run with --state (downloads everything and
writes the state), and a second run with --state (HEAD only), and prints
the ratios. Usage: bench/anchor_state.sh [--anchors N] [--runs R]."""

import argparse
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time

import boto3
from botocore.config import Config


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--vouch", required=True)
    ap.add_argument("--anchors", type=int, default=200)
    ap.add_argument("--runs", type=int, default=3)
    a = ap.parse_args()
    vouch = os.path.abspath(a.vouch)
    port = free_port()
    endpoint = f"http://127.0.0.1:{port}"
    server = subprocess.Popen(
        [os.path.join(os.path.dirname(sys.executable), "moto_server"), "-H", "127.0.0.1", "-p", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    env = dict(
        os.environ,
        AWS_ACCESS_KEY_ID="testing",
        AWS_SECRET_ACCESS_KEY="testing",
        AWS_REGION="us-east-1",
        AWS_EC2_METADATA_DISABLED="true",
        AWS_ENDPOINT_URL=endpoint,
    )
    work = tempfile.mkdtemp(prefix="vouch-anchor-bench-")
    try:
        for _ in range(100):
            try:
                socket.create_connection(("127.0.0.1", port), 0.2).close()
                break
            except OSError:
                time.sleep(0.1)
        s3 = boto3.client(
            "s3",
            endpoint_url=endpoint,
            region_name="us-east-1",
            aws_access_key_id="testing",
            aws_secret_access_key="testing",
            config=Config(request_checksum_calculation="when_required"),
        )
        s3.create_bucket(Bucket="bench", ObjectLockEnabledForBucket=True)
        run = lambda *args: subprocess.run([vouch, *args], env=env, cwd=work, check=True, capture_output=True)
        run("keygen", "--origin", "example.com/bench", "--out", "k")
        t0 = time.perf_counter()
        for i in range(a.anchors):
            run("append", "log.jsonl", "--key", "k", '{"i":%d}' % i)
            run("anchor", "log.jsonl", "--key", "k", "--to", "s3://bench/p", "--retain-days", "1")
        made = time.perf_counter() - t0

        def verify(*extra):
            t = time.perf_counter()
            o = subprocess.run(
                [vouch, "anchor", "verify", "log.jsonl", "--pub", "k.pub", "--from", "s3://bench/p", *extra],
                env=env, cwd=work, capture_output=True,
            )
            if o.returncode != 0:
                sys.exit(f"anchor verify exited {o.returncode}: {o.stdout.decode()[-2000:]}")
            return time.perf_counter() - t

        full = statistics.median(verify() for _ in range(a.runs))
        firsts, seconds = [], []
        for r in range(a.runs):
            state = os.path.join(work, f"state-{r}.json")
            firsts.append(verify("--state", state))
            seconds.append(verify("--state", state))
        first, second = statistics.median(firsts), statistics.median(seconds)
        print(f"{a.anchors} S3 anchors on moto (made in {made:.1f} s); median of {a.runs} runs")
        print(f"anchor verify, no state:          {full:7.3f} s")
        print(f"anchor verify --state, first run: {first:7.3f} s  ({first / full:.2f}x of no state)")
        print(f"anchor verify --state, next run:  {second:7.3f} s  ({second / full:.2f}x of no state)")
    finally:
        server.terminate()
        server.wait()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
