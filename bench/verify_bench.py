#!/usr/bin/env python3
"""Driver for bench/verify.sh (stdlib only). See that script for usage."""
import argparse, json, math, os, random, subprocess, sys, time

TIME = "/usr/bin/time" if os.path.exists("/usr/bin/time") else None

def timed(cmd, repeat=3):
    """Best of `repeat` runs (page cache warm): (seconds, peak RSS MB, stdout).
    Peak RSS comes from GNU time (-f %M) when installed, else it is NaN."""
    import tempfile
    best = None
    for _ in range(repeat):
        with tempfile.TemporaryFile() as out, tempfile.NamedTemporaryFile("r") as rss:
            full = [TIME, "-q", "-f", "%M", "-o", rss.name] + cmd if TIME else cmd
            t0 = time.perf_counter()
            subprocess.run(full, stdout=out, stderr=subprocess.DEVNULL, check=False)
            dt = time.perf_counter() - t0
            out.seek(0)
            data = out.read()
            try:
                peak = int(rss.read().strip().splitlines()[-1]) / 1024
            except (ValueError, IndexError):
                peak = float("nan")
        if best is None or dt < best[0]:
            best = (dt, peak, data)
    return best

PAD = "lorem ipsum dolor sit amet, consectetur adipiscing elit "

def records(n, start=0):
    for i in range(start, start + n):
        yield ('{"event":"request","i":%d,"user":"user%d","path":"/api/v1/items/%d",'
               '"status":200,"latency_ms":%d,"msg":"%s"}\n' % (i, i % 977, i * 7, i % 311, PAD * (1 + i % 5)))

def append(vouch, log, key, n, start=0):
    p = subprocess.Popen([vouch, "append", log, "--key", key, "--kind", "http"],
                         stdin=subprocess.PIPE, stdout=subprocess.DEVNULL)
    buf = []
    for line in records(n, start):
        buf.append(line)
        if len(buf) >= 4096:
            p.stdin.write("".join(buf).encode()); buf.clear()
    p.stdin.write("".join(buf).encode()); p.stdin.close()
    if p.wait() != 0:
        sys.exit("append failed")

def checkpoint(vouch, log, key):
    subprocess.run([vouch, "checkpoint", log, "--key", key], check=True, stdout=subprocess.DEVNULL)

def keygen(vouch, origin, out):
    if not os.path.exists(out):
        subprocess.run([vouch, "keygen", "--origin", origin, "--out", out], check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

AVG_RECORD = 360  # bytes, measured on the generator above

def make_single(vouch, d, mb):
    log, key = os.path.join(d, "single.jsonl"), os.path.join(d, "single.key")
    if os.path.exists(log) and os.path.getsize(log) >= mb * 1e6 * 0.95:
        return log, key
    for f in (log,):
        if os.path.exists(f): os.remove(f)
    keygen(vouch, "bench.example/single", key)
    total = int(mb * 1e6 / AVG_RECORD)
    rounds = 10
    for r in range(rounds):
        append(vouch, log, key, total // rounds, r * (total // rounds))
        checkpoint(vouch, log, key)
        print(f"  single log: {os.path.getsize(log)/1e6:.0f} MB", file=sys.stderr)
    return log, key

def make_fleet(vouch, d, files, mb):
    fleet = os.path.join(d, f"fleet-{files}-{mb}")
    keyset = os.path.join(d, f"fleet-{files}-{mb}.pub")
    done = os.path.join(fleet, ".done")
    if os.path.exists(done):
        return fleet, keyset
    os.makedirs(os.path.join(fleet, "keys"), exist_ok=True)
    rng = random.Random(42)
    # Log-uniform sizes with the requested mean.
    lo, hi = 2e3, 600e3
    mean = (hi - lo) / math.log(hi / lo)
    scale = mb * 1e6 / files / mean
    keys = []
    for i in range(files):
        size = math.exp(rng.uniform(math.log(lo), math.log(hi))) * scale
        n = max(2, int(size / AVG_RECORD))
        origin = f"bench.example/fleet-{i:05d}"
        key = os.path.join(fleet, "keys", f"{i:05d}.key")
        log = os.path.join(fleet, f"host-{i:05d}.jsonl")
        keygen(vouch, origin, key)
        append(vouch, log, key, n)
        checkpoint(vouch, log, key)
        keys.append(open(key + ".pub").read().strip())
        if i % 1000 == 999:
            print(f"  fleet: {i+1} logs", file=sys.stderr)
    with open(keyset, "w") as f:
        f.write("\n".join(keys) + "\n")
    open(done, "w").close()
    return fleet, keyset

def fleet_files(fleet):
    return sorted(os.path.join(fleet, f) for f in os.listdir(fleet) if f.endswith(".jsonl"))

def warm(paths):
    for p in paths:
        with open(p, "rb") as f:
            while f.read(1 << 24):
                pass

def summary(out):
    return json.loads(out)["summary"]

def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--vouch", required=True)
    ap.add_argument("--single-mb", type=float, default=2000)
    ap.add_argument("--fleet-files", type=int, default=10000)
    ap.add_argument("--fleet-mb", type=float, default=1000)
    ap.add_argument("--dir", default=os.environ.get("VOUCH_BENCH_DIR", "/tmp/vouch-bench"))
    a = ap.parse_args()
    vouch = os.path.abspath(a.vouch)
    os.makedirs(a.dir, exist_ok=True)
    cores = os.cpu_count()
    print(f"generating data in {a.dir} (reused when present) ...", file=sys.stderr)
    single, key = make_single(vouch, a.dir, a.single_mb)
    fleet, keyset = make_fleet(vouch, a.dir, a.fleet_files, a.fleet_mb)
    files = fleet_files(fleet)
    rows = []

    # (a) one big log
    warm([single])
    size = os.path.getsize(single)
    floor = timed(["openssl", "dgst", "-sha256", single])
    v1 = timed([vouch, "verify", single, "--pub", key + ".pub", "--format", "json", "--threads", "1"])
    vn = timed([vouch, "verify", single, "--pub", key + ".pub", "--format", "json"])
    recs = summary(vn[2])["records"]
    assert summary(vn[2])["valid"] == 1, vn[2][:400]
    rows.append(("single log: openssl dgst -sha256", floor, size, recs))
    rows.append(("single log: vouch verify, 1 thread", v1, size, recs))
    rows.append((f"single log: vouch verify, {cores} threads", vn, size, recs))

    # (b) the fleet
    warm(files)
    fsize = sum(os.path.getsize(f) for f in files)
    ffloor = timed(["openssl", "dgst", "-sha256"] + files)
    fv = timed([vouch, "verify", fleet, "--pub", keyset, "--format", "json"])
    fs = summary(fv[2])
    assert fs["valid"] == len(files), fs
    rows.append((f"fleet ({len(files)} logs): openssl dgst -sha256", ffloor, fsize, fs["records"]))
    rows.append((f"fleet ({len(files)} logs): vouch verify, {cores} threads", fv, fsize, fs["records"]))

    # (c) incremental: full run with --state, append 1%, re-run
    state = os.path.join(a.dir, "single.state.json")
    inc_log = os.path.join(a.dir, "inc.jsonl")
    subprocess.run(["cp", "--reflink=auto", single, inc_log], check=True)
    if os.path.exists(state): os.remove(state)
    full = timed([vouch, "verify", inc_log, "--pub", key + ".pub", "--format", "json", "--state", state], repeat=1)
    n_new = max(1, recs // 100)
    append(vouch, inc_log, key, n_new, recs)
    checkpoint(vouch, inc_log, key)
    warm([inc_log])
    inc = timed([vouch, "verify", inc_log, "--pub", key + ".pub", "--format", "json", "--state", state], repeat=1)
    isum = json.loads(inc[2])
    assert isum["logs"][0]["resumed_from"] is not None, "incremental run did not resume"
    assert isum["summary"]["valid"] == 1, inc[2][:400]
    os.remove(inc_log)

    print()
    print(f"machine: {cores} cores; {os.uname().machine}")
    print(f"{'run':58} {'seconds':>8} {'MB/s':>8} {'records/s':>11} {'vs floor':>9} {'peak RSS':>9}")
    base = {"single": floor[0], "fleet": ffloor[0]}
    for name, (dt, rss, _), nbytes, nrec in rows:
        kind = "single" if name.startswith("single") else "fleet"
        print(f"{name:58} {dt:8.3f} {nbytes/dt/1e6:8.0f} {nrec/dt:11.0f} {dt/base[kind]:8.2f}x {rss:7.1f}MB")
    print(f"{'incremental: full run with --state':58} {full[0]:8.3f}")
    print(f"{'incremental: after appending 1% (' + str(n_new) + ' records)':58} {inc[0]:8.3f}"
          f"   = {100*inc[0]/full[0]:.1f}% of the full run")
    print()
    print(f"single log, all cores vs openssl dgst: {vn[0]/floor[0]:.2f}x (target <= 1.2x)")
    print(f"scaling, all cores vs 1 thread: {v1[0]/vn[0]:.2f}x (target >= 1.7x)")
    print(f"fleet bytes/s vs single-log bytes/s: {(fsize/fv[0])/(size/vn[0])*100:.0f}% (target >= 80%)")
    print(f"peak RSS: single {vn[1]:.1f} MB, fleet {fv[1]:.1f} MB (target <= 100 MB)")
    print(f"incremental: {100*inc[0]/full[0]:.1f}% of the full run (target <= 5%)")

if __name__ == "__main__":
    main()
