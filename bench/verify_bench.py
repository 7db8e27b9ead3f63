#!/usr/bin/env python3
"""Driver for bench/verify.sh (stdlib only). See that script for usage."""
import argparse, json, math, os, random, subprocess, sys, time

TIME = "/usr/bin/time" if os.path.exists("/usr/bin/time") else None

def run_once(cmd):
    """One run: (wall seconds, CPU seconds user+sys, peak RSS MB, stdout).
    CPU comes from the rusage wait4 returns (the command and the children
    it waited for); peak RSS from GNU time (-f %M) when installed, else NaN
    (a child's ru_maxrss counts the forking Python's pages)."""
    import tempfile
    with tempfile.TemporaryFile() as out, tempfile.NamedTemporaryFile("r") as rss:
        full = [TIME, "-q", "-f", "%M", "-o", rss.name] + cmd if TIME else cmd
        t0 = time.perf_counter()
        p = subprocess.Popen(full, stdout=out, stderr=subprocess.DEVNULL)
        _, _, ru = os.wait4(p.pid, 0)
        dt = time.perf_counter() - t0
        out.seek(0)
        try:
            peak = int(rss.read().strip().splitlines()[-1]) / 1024
        except (ValueError, IndexError):
            peak = float("nan")
        return dt, ru.ru_utime + ru.ru_stime, peak, out.read()

def timed(cmd, repeat=3):
    """Median of `repeat` runs (page cache warm), per figure:
    (wall s, CPU s, peak RSS MB, stdout of the last run)."""
    runs = [run_once(cmd) for _ in range(repeat)]
    med = lambda i: sorted(r[i] for r in runs)[len(runs) // 2]
    return med(0), med(1), max(r[2] for r in runs), runs[-1][3]

def paired(cmds, rounds):
    """Runs each command of `cmds` (name -> argv) once per round, in turn
    (A, B, A, B, ...), and returns name -> (median wall, median CPU,
    max RSS, last stdout). Alternating puts old and new binaries under the
    same background load, which the medians then even out."""
    runs = {name: [] for name in cmds}
    for _ in range(rounds):
        for name, cmd in cmds.items():
            runs[name].append(run_once(cmd))
    out = {}
    for name, rs in runs.items():
        med = lambda i: sorted(r[i] for r in rs)[len(rs) // 2]
        out[name] = (med(0), med(1), max(r[2] for r in rs), rs[-1][3])
    return out

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
    ap.add_argument("--baseline", help="an older vouch binary, run alternately with --vouch")
    ap.add_argument("--rounds", type=int, default=5, help="paired rounds (median reported)")
    ap.add_argument("--single-mb", type=float, default=930, help="about 1.2 GB of log")
    ap.add_argument("--fleet-files", type=int, default=10000)
    ap.add_argument("--fleet-mb", type=float, default=1000)
    ap.add_argument("--no-incremental", action="store_true")
    ap.add_argument("--dir", default=os.environ.get("VOUCH_BENCH_DIR", "/tmp/vouch-bench"))
    a = ap.parse_args()
    vouch = os.path.abspath(a.vouch)
    bins = {"new": vouch}
    if a.baseline:
        bins = {"old": os.path.abspath(a.baseline), "new": vouch}
    os.makedirs(a.dir, exist_ok=True)
    cores = os.cpu_count()
    print(f"generating data in {a.dir} (reused when present) ...", file=sys.stderr)
    single, key = make_single(vouch, a.dir, a.single_mb)
    fleet, keyset = make_fleet(vouch, a.dir, a.fleet_files, a.fleet_mb)
    files = fleet_files(fleet)
    size = os.path.getsize(single)
    fsize = sum(os.path.getsize(f) for f in files)
    warm([single])
    warm(files)

    # One paired run: per round, the floor and every binary on the same
    # files, in turn.
    cmds = {"dgst": ["openssl", "dgst", "-sha256", single],
            "fleet dgst": ["openssl", "dgst", "-sha256"] + files}
    for tag, b in bins.items():
        cmds[f"{tag} 1"] = [b, "verify", single, "--pub", key + ".pub", "--format", "json", "--threads", "1"]
        cmds[f"{tag} n"] = [b, "verify", single, "--pub", key + ".pub", "--format", "json"]
        cmds[f"{tag} fleet"] = [b, "verify", fleet, "--pub", keyset, "--format", "json"]
    # The fleet without its 10,000 signature checks (and keys): what the
    # per-log signature costs, measured rather than estimated.
    cmds["new fleet chain-only"] = [vouch, "verify", fleet, "--chain-only", "--format", "json"]
    print(f"measuring: {a.rounds} rounds of {len(cmds)} runs, alternating ...", file=sys.stderr)
    r = paired(cmds, a.rounds)
    recs = summary(r["new n"][3])["records"]
    for tag in bins:
        assert summary(r[f"{tag} n"][3])["valid"] == 1, r[f"{tag} n"][3][:400]
        assert summary(r[f"{tag} 1"][3])["valid"] == 1
        fs = summary(r[f"{tag} fleet"][3])
        assert fs["valid"] == len(files), fs
    frecs = summary(r["new fleet"][3])["records"]
    assert summary(r["new fleet chain-only"][3])["unauthenticated"] == len(files)

    print()
    print(f"machine: {cores} cores; {os.uname().machine}; {a.rounds} paired rounds, medians;"
          f" single log {size/1e9:.2f} GB / {recs} records; fleet {len(files)} logs,"
          f" {fsize/1e9:.2f} GB / {frecs} records")
    print(f"{'run':44} {'wall s':>8} {'CPU s':>8} {'MB/s':>7} {'wall/dgst':>9} {'CPU/dgst':>9} {'ns CPU/B':>8} {'RSS MB':>7}")
    d, fd = r["dgst"], r["fleet dgst"]
    def row(name, m, base, nbytes):
        print(f"{name:44} {m[0]:8.3f} {m[1]:8.3f} {nbytes/m[0]/1e6:7.0f} {m[0]/base[0]:8.2f}x"
              f" {m[1]/base[1]:8.2f}x {m[1]*1e9/nbytes:8.3f} {m[2]:7.1f}")
    row("single log: openssl dgst -sha256", d, d, size)
    for tag in bins:
        row(f"single log: {tag}, 1 thread", r[f"{tag} 1"], d, size)
        row(f"single log: {tag}, {cores} threads", r[f"{tag} n"], d, size)
    row(f"fleet: openssl dgst -sha256", fd, fd, fsize)
    for tag in bins:
        row(f"fleet: {tag}, {cores} threads", r[f"{tag} fleet"], fd, fsize)
    row(f"fleet: new, --chain-only (no signatures)", r["new fleet chain-only"], fd, fsize)

    if not a.no_incremental:
        # Incremental: full run with --state, append 1%, re-run (new binary).
        state = os.path.join(a.dir, "single.state.json")
        inc_log = os.path.join(a.dir, "inc.jsonl")
        subprocess.run(["cp", "--reflink=auto", single, inc_log], check=True)
        if os.path.exists(state): os.remove(state)
        full = run_once([vouch, "verify", inc_log, "--pub", key + ".pub", "--format", "json", "--state", state])
        n_new = max(1, recs // 100)
        append(vouch, inc_log, key, n_new, recs)
        checkpoint(vouch, inc_log, key)
        warm([inc_log])
        inc = run_once([vouch, "verify", inc_log, "--pub", key + ".pub", "--format", "json", "--state", state])
        isum = json.loads(inc[3])
        assert isum["logs"][0]["resumed_from"] is not None, "incremental run did not resume"
        assert isum["summary"]["valid"] == 1, inc[3][:400]
        os.remove(inc_log)
        print(f"{'incremental: full run with --state':44} {full[0]:8.3f}")
        print(f"{'incremental: after appending 1%':44} {inc[0]:8.3f}   = {100*inc[0]/full[0]:.1f}% of the full run")

    print()
    n, f = r["new n"], r["new fleet"]
    ok = lambda c: "met" if c else "NOT met"
    w, c = n[0] / d[0], n[1] / d[1]
    fr = (fsize / f[0]) / (size / n[0]) * 100
    print(f"targets (issue 27), new binary, {cores} cores:")
    print(f"  single log wall vs openssl dgst: {w:.2f}x (target <= 1.0x) {ok(w <= 1.0)}")
    print(f"  single log CPU vs openssl dgst:  {c:.2f}x (target <= 2.0x) {ok(c <= 2.0)}")
    print(f"  1 thread CPU per byte: {r['new 1'][1]*1e9/size:.3f} ns (openssl dgst {d[1]*1e9/size:.3f} ns)")
    print(f"  fleet bytes/s vs single log:     {fr:.0f}% (target >= 90%) {ok(fr >= 90)}")
    print(f"  peak RSS: single {n[2]:.1f} MB, fleet {f[2]:.1f} MB (target < 40 MB) {ok(max(n[2], f[2]) < 40)}")
    # Where the fleet's ratio comes from: CPU per log beyond the single
    # log's CPU per byte, and the part of it the signature checks take.
    fc = r["new fleet chain-only"]
    nlogs = len(files)
    base = n[1] / size * fsize
    print(f"fleet per log (CPU, {cores} threads; the fleet's bytes at the single log's CPU per byte = {base:.2f} s):")
    print(f"  beyond the single log's cost per byte: {(f[1] - base) / nlogs * 1e6:.1f} us per log;"
          f" of it the checkpoint signatures and their keys (against --chain-only): {(f[1] - fc[1]) / nlogs * 1e6:.1f} us")
    print(f"  90% of the single log's bytes/s allows {base * (1 / 0.9 - 1) / nlogs * 1e6:.1f} us per log;"
          f" with no cost per file at all, the signatures alone cap the fleet at"
          f" {base / (base + f[1] - fc[1]) * 100:.0f}% (CPU)")
    print(f"  fleet with --chain-only, bytes/s vs single log: {(fsize / fc[0]) / (size / n[0]) * 100:.0f}%")
    if "old" in bins:
        o1, on, of = r["old 1"], r["old n"], r["old fleet"]
        print("new vs old (paired medians):")
        print(f"  1 thread CPU {r['new 1'][1]/o1[1]:.2f}x, {cores} threads wall {n[0]/on[0]:.2f}x"
              f" CPU {n[1]/on[1]:.2f}x, fleet wall {f[0]/of[0]:.2f}x CPU {f[1]/of[1]:.2f}x")

if __name__ == "__main__":
    main()
