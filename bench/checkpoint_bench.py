#!/usr/bin/env python3
"""Cost of `vouch checkpoint` on a large log (stdlib only).

Makes (or reuses) a log of --mb megabytes, then measures in one run:
  full:    `checkpoint` with the tree cache removed (re-verifies the whole log),
  cached:  `append` of --new records then `checkpoint` through the tree cache,
and prints both and their ratio. The cache path reads only what follows the
last checkpoint record.

  bench/checkpoint.sh                 # 1000 MB, 100 new records
  bench/checkpoint.sh --mb 200        # quick
"""
import argparse, os, shutil, subprocess, sys, time
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import verify_bench as vb

def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--vouch", required=True)
    ap.add_argument("--mb", type=float, default=1000)
    ap.add_argument("--new", type=int, default=100)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--dir", default=os.environ.get("VOUCH_BENCH_DIR", "/tmp/vouch-bench"))
    a = ap.parse_args()
    vouch = os.path.abspath(a.vouch)
    d = os.path.join(a.dir, f"checkpoint-{int(a.mb)}")
    os.makedirs(d, exist_ok=True)
    print(f"generating a {a.mb:.0f} MB log in {d} (reused when present) ...", file=sys.stderr)
    log, key = vb.make_single(vouch, d, a.mb)
    vb.warm([log])
    size = os.path.getsize(log)
    cache = log + ".vouch-tree"
    n = 0
    full, cached = [], []
    for _ in range(a.repeat):
        vb.append(vouch, log, key, a.new, 10**9 + n); n += a.new
        if os.path.exists(cache):
            os.remove(cache)
        t0 = time.perf_counter(); vb.checkpoint(vouch, log, key); full.append(time.perf_counter() - t0)
        vb.append(vouch, log, key, a.new, 10**9 + n); n += a.new
        t0 = time.perf_counter(); vb.checkpoint(vouch, log, key); cached.append(time.perf_counter() - t0)
    f, c = min(full), min(cached)
    print(f"log: {size/1e6:.0f} MB; best of {a.repeat}")
    print(f"checkpoint, full re-verification (no cache):   {f*1000:10.1f} ms")
    print(f"checkpoint after {a.new} new records (cache):  {c*1000:10.1f} ms")
    print(f"ratio full/cached: {f/c:.0f}x")

if __name__ == "__main__":
    main()
