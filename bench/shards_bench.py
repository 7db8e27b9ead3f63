#!/usr/bin/env python3
"""Driver for bench/shards.sh (stdlib, plus boto3 from .venv for uploads)."""
import argparse, json, os, socket, subprocess, sys, tempfile, time

sys.path.insert(0, os.path.dirname(__file__))
from verify_bench import TIME, make_fleet, fleet_files, warm  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def run(cmd, env=None):
    """One run: (wall seconds, CPU seconds, peak RSS MB, stdout)."""
    with tempfile.TemporaryFile() as out, tempfile.NamedTemporaryFile("r") as res:
        full = [TIME, "-q", "-f", "%e %U %S %M", "-o", res.name] + cmd
        t0 = time.perf_counter()
        subprocess.run(full, stdout=out, stderr=subprocess.DEVNULL, env=env, check=False)
        wall = time.perf_counter() - t0
        out.seek(0)
        data = out.read()
        _, u, s, m = res.read().strip().splitlines()[-1].split()
        return wall, float(u) + float(s), int(m) / 1024, data


def best(cmd, repeat, env=None):
    runs = [run(cmd, env) for _ in range(repeat)]
    return min(runs, key=lambda r: r[0])


def shards_side_by_side(vouch, fleet, keyset, n, d):
    """N shards of one thread each, at once, then the merge."""
    t0 = time.perf_counter()
    procs, outs = [], []
    for i in range(n):
        p = os.path.join(d, f"shard-{i}.json")
        outs.append(p)
        f = open(p, "wb")
        cmd = [TIME, "-q", "-f", "%U %S", "-o", p + ".time", vouch, "verify", fleet,
               "--pub", keyset, "--format", "json", "--threads", "1", "--shard", f"{i}/{n}"]
        procs.append((subprocess.Popen(cmd, stdout=f, stderr=subprocess.DEVNULL), f))
    for pr, f in procs:
        pr.wait()
        f.close()
    shards_wall = time.perf_counter() - t0
    cpu = 0.0
    for p in outs:
        u, s = open(p + ".time").read().split()[-2:]
        cpu += float(u) + float(s)
    mw, mc, mrss, data = run([vouch, "verify", "--format", "json", "--merge"] + outs)
    return shards_wall, cpu, mw, mc, json.loads(data)


def moto_up(d):
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    proc = subprocess.Popen([os.path.join(ROOT, ".venv/bin/moto_server"), "-H", "127.0.0.1", "-p", str(port)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    for _ in range(300):
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return proc, f"http://127.0.0.1:{port}"
        except OSError:
            time.sleep(0.1)
    raise SystemExit("moto_server did not start")


def upload(endpoint, files, bucket):
    script = (
        "import boto3, sys, concurrent.futures as cf\n"
        f"s3 = boto3.client('s3', endpoint_url={endpoint!r}, region_name='us-east-1', "
        "aws_access_key_id='t', aws_secret_access_key='t')\n"
        f"s3.create_bucket(Bucket={bucket!r})\n"
        "files = sys.stdin.read().split()\n"
        "with cf.ThreadPoolExecutor(8) as ex:\n"
        f"    list(ex.map(lambda p: s3.upload_file(p, {bucket!r}, 'fleet/' + p.rsplit('/', 1)[1]), files))\n"
    )
    subprocess.run([os.path.join(ROOT, ".venv/bin/python"), "-c", script],
                   input="\n".join(files).encode(), check=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--vouch", required=True)
    ap.add_argument("--dir", default=os.environ.get("VOUCH_BENCH_DIR", "/tmp/vouch-bench"))
    ap.add_argument("--fleet-files", type=int, default=10000)
    ap.add_argument("--fleet-mb", type=float, default=1000)
    ap.add_argument("--s3-files", type=int, default=2000, help="logs of the fleet uploaded to moto")
    ap.add_argument("--repeat", type=int, default=3)
    a = ap.parse_args()
    os.makedirs(a.dir, exist_ok=True)
    vouch = os.path.abspath(a.vouch)
    fleet, keyset = make_fleet(vouch, a.dir, a.fleet_files, a.fleet_mb)
    files = fleet_files(fleet)
    size = sum(os.path.getsize(f) for f in files)
    warm(files)
    base = [vouch, "verify", fleet, "--pub", keyset, "--format", "json"]
    rows = []
    # Paired and alternating: single run, one shard of one, two shards.
    singles, ones, twos = [], [], []
    with tempfile.TemporaryDirectory() as d:
        for _ in range(a.repeat):
            singles.append(run(base + ["--threads", "2"]))
            ones.append(run(base + ["--threads", "2", "--shard", "0/1"]))
            twos.append(shards_side_by_side(vouch, fleet, keyset, 2, d))
    med = lambda v: sorted(v)[len(v) // 2]
    sw, sc = med([r[0] for r in singles]), med([r[1] for r in singles])
    ow, oc = med([r[0] for r in ones]), med([r[1] for r in ones])
    tw, tc = med([r[0] for r in twos]), med([r[1] for r in twos])
    mw, mc = med([r[2] for r in twos]), med([r[3] for r in twos])
    merged = twos[-1][4]
    single_doc = json.loads(singles[-1][3])
    assert merged["logs"] == single_doc["logs"], "merged report differs from the single run"
    mb = size / 1e6
    print(f"fleet: {len(files)} logs, {mb:.0f} MB; median of {a.repeat} paired runs")
    print(f"{'run':58} {'wall s':>7} {'CPU s':>7} {'MB/s':>7} {'RSS MB':>7}")
    print(f"{'single run, 2 threads':58} {sw:7.3f} {sc:7.3f} {mb/sw:7.0f} {med([r[2] for r in singles]):7.1f}")
    print(f"{'--shard 0/1, 2 threads (listing + partition)':58} {ow:7.3f} {oc:7.3f} {mb/ow:7.0f} {med([r[2] for r in ones]):7.1f}")
    print(f"{'2 shards x 1 thread side by side':58} {tw:7.3f} {tc:7.3f} {mb/tw:7.0f}")
    print(f"{'merge of the 2 reports':58} {mw:7.3f} {mc:7.3f}")
    print(f"{'2 shards + merge':58} {tw+mw:7.3f} {tc+mc:7.3f} {mb/(tw+mw):7.0f}")
    print(f"shard overhead: --shard 0/1 vs single {100*(ow-sw)/sw:+.1f}% wall, {100*(oc-sc)/sc:+.1f}% CPU; "
          f"merge {100*mw/sw:.1f}% of the single run's wall; 2 shards + merge vs single {100*((tw+mw)-sw)/sw:+.1f}% wall, {100*((tc+mc)-sc)/sc:+.1f}% CPU")

    # Local vs moto on the first s3-files logs.
    sub = files[: a.s3_files]
    subsize = sum(os.path.getsize(f) for f in sub) / 1e6
    proc, endpoint = moto_up(a.dir)
    try:
        upload(endpoint, sub, "bench")
        with tempfile.TemporaryDirectory() as d:
            for f in sub:
                os.symlink(f, os.path.join(d, os.path.basename(f)))
            lw = best([vouch, "verify", d, "--pub", keyset, "--format", "json"], a.repeat)
            env = dict(os.environ, AWS_ACCESS_KEY_ID="t", AWS_SECRET_ACCESS_KEY="t", AWS_REGION="us-east-1")
            rw = best([vouch, "verify", "s3://bench/fleet/", "--endpoint", endpoint, "--pub", keyset, "--format", "json"], a.repeat, env)
            doc = json.loads(rw[3])
            print(f"\nlocal vs moto S3 ({len(sub)} logs, {subsize:.0f} MB; best of {a.repeat})")
            print(f"{'local disk':58} {lw[0]:7.3f} {lw[1]:7.3f} {subsize/lw[0]:7.0f} {lw[2]:7.1f}")
            print(f"{'s3:// (moto on 127.0.0.1)':58} {rw[0]:7.3f} {rw[1]:7.3f} {subsize/rw[0]:7.0f} {rw[2]:7.1f}")
            print(f"  transfer: {doc['transfer']['requests']} requests, {doc['transfer']['bytes']/1e6:.0f} MB for {subsize:.0f} MB of logs; exit {doc['exit_code']}")
    finally:
        proc.kill()


if __name__ == "__main__":
    main()
