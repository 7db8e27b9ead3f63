"""Driver for bench/wrap.sh: runs the cases, prints the table and ratios."""
import json
import os
import statistics
import subprocess
import sys
import time

vouch, dirpath, shm, calls, runs, conc = sys.argv[1:7]
calls, runs, conc = int(calls), int(runs), int(conc)
peers = "tests/peers/mcp"
client = ["node", f"{peers}/bench-client.mjs"]
server = ["node", f"{peers}/fast-server.mjs"]


def fsync_latency(directory):
    path = os.path.join(directory, "fsync.probe")
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    times = []
    for _ in range(500):
        t = time.perf_counter()
        os.write(fd, b"x" * 300 + b"\n")
        os.fdatasync(fd)
        times.append((time.perf_counter() - t) * 1e6)
    os.close(fd)
    os.unlink(path)
    times.sort()
    return times[len(times) // 2], times[int(len(times) * 0.99)]


def wrap(log):
    return [vouch, "wrap", "--policy", f"{dirpath}/policy.toml", "--log", log,
            "--key", f"{dirpath}/k", "--id", "bench", "--no-tty", "--"] + server


def run(command, concurrency, log=None):
    results = []
    for i in range(runs):
        if log:
            for suffix in ("", ".tree"):
                try:
                    os.unlink(log + suffix)
                except FileNotFoundError:
                    pass
        out = subprocess.run(
            client + ["--calls", str(calls), "--concurrency", str(concurrency),
                      "--warmup", "500", "--"] + command,
            capture_output=True, text=True, check=True)
        r = json.loads(out.stdout)
        if r.get("errors"):
            sys.exit(f"{r['errors']} calls failed: {r}")
        results.append(r)
        if log:
            v = subprocess.run([vouch, "verify", log, "--pub", f"{dirpath}/k.pub"],
                               capture_output=True, text=True)
            if v.returncode != 0:
                sys.exit(f"the log does not verify: {v.stdout}{v.stderr}")
    med = lambda key: statistics.median(r[key] for r in results)
    return {k: med(k) for k in ("p50_us", "p90_us", "p99_us", "calls_per_s")}


disk50, disk99 = fsync_latency(dirpath)
shm50, shm99 = fsync_latency(shm)
rows = []
for c in (1, conc):
    d = run(server, c)
    w_disk = run(wrap(f"{dirpath}/wrap.log"), c, f"{dirpath}/wrap.log")
    w_shm = run(wrap(f"{shm}/wrap.log"), c, f"{shm}/wrap.log")
    rows.append((c, d, w_disk, w_shm))

print(f"fast-server, {calls} calls per run, median of {runs} run(s), {os.cpu_count()} CPUs")
print(f"fdatasync of the log's disk ({dirpath}): p50 {disk50:.0f} µs, p99 {disk99:.0f} µs;"
      f" tmpfs ({shm}): p50 {shm50:.0f} µs")
print()
print(f"{'case':<28}{'p50 µs':>10}{'p90 µs':>10}{'p99 µs':>10}{'calls/s':>10}")
for c, d, wd, ws in rows:
    for name, r in (("direct", d), ("wrap, log on disk", wd), ("wrap, log on tmpfs", ws)):
        print(f"{name + f' (C={c})':<28}{r['p50_us']:>10.0f}{r['p90_us']:>10.0f}"
              f"{r['p99_us']:>10.0f}{r['calls_per_s']:>10.0f}")
print()
for c, d, wd, ws in rows:
    for name, r in (("disk", wd), ("tmpfs", ws)):
        print(f"added by vouch wrap (C={c}, log on {name}): p50 +{r['p50_us'] - d['p50_us']:.0f} µs,"
              f" p99 +{r['p99_us'] - d['p99_us']:.0f} µs; throughput {r['calls_per_s'] / d['calls_per_s']:.2f}× direct")
