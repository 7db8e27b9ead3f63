#!/usr/bin/env python3
"""Driver for bench/stamp.sh: see that script for what is measured."""
import argparse
import os
import shutil
import subprocess
import sys
import time


def run(cmd, **kw):
    """Runs cmd (a shell string or list); returns (wall seconds, peak RSS MiB
    of the process itself, exit status)."""
    t0 = time.perf_counter()
    p = subprocess.Popen(cmd, shell=isinstance(cmd, str), stdout=subprocess.DEVNULL,
                         stderr=subprocess.PIPE, **kw)
    _, status, ru = os.wait4(p.pid, 0)
    wall = time.perf_counter() - t0
    err = p.stderr.read().decode(errors="replace")
    p.stderr.close()
    code = os.waitstatus_to_exitcode(status)
    return wall, ru.ru_maxrss / 1024.0, code, err


def best(cmd, runs, ok=(0,), **kw):
    results = []
    for _ in range(runs):
        wall, rss, code, err = run(cmd, **kw)
        if code not in ok:
            sys.exit(f"command failed ({code}): {cmd}\n{err[-2000:]}")
        results.append((wall, rss))
    return min(r[0] for r in results), max(r[1] for r in results)


def tree_stats(root):
    files = 0
    size = 0
    for dirpath, dirnames, filenames in os.walk(root):
        for f in filenames:
            p = os.path.join(dirpath, f)
            try:
                st = os.lstat(p)
            except OSError:
                continue
            if os.path.isfile(p) and not os.path.islink(p):
                files += 1
                size += st.st_size
    return files, size


def warm(path):
    subprocess.run(f"find {path} -type f -print0 | xargs -0 -n1000 cat > /dev/null 2>&1",
                   shell=True, check=False)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--vouch", required=True)
    ap.add_argument("--file-gb", type=float, default=4.0)
    ap.add_argument("--tree", default="/usr", help="directory copied as the tree")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--million", action="store_true")
    ap.add_argument("--skip-file", action="store_true")
    ap.add_argument("--skip-tree", action="store_true")
    a = ap.parse_args()
    vouch = os.path.abspath(a.vouch)
    work = os.environ.get("VOUCH_BENCH_DIR", "/tmp/vouch-bench")
    os.makedirs(work, exist_ok=True)
    nproc = os.cpu_count() or 1
    key = os.path.join(work, "stamp.key")
    if not os.path.exists(key):
        subprocess.run([vouch, "keygen", "--origin", "bench.example/stamp", "--out", key],
                       check=True, stdout=subprocess.DEVNULL)
    out = os.path.join(work, "out.vouch")
    print(f"machine: {nproc} cores; vouch {vouch}")

    if not a.skip_file:
        big = os.path.join(work, f"big-{a.file_gb:g}g.bin")
        nbytes = int(a.file_gb * (1 << 30))
        if not os.path.exists(big) or os.path.getsize(big) != nbytes:
            print(f"generating {big} ...", flush=True)
            subprocess.run(f"head -c {nbytes} /dev/urandom > {big}", shell=True, check=True)
        warm(big)
        t_ossl, _ = best(["openssl", "dgst", "-sha256", big], a.runs)
        t_v, rss = best([vouch, "stamp", big, "--key", key, "--base", work, "--out", out], a.runs)
        mb = nbytes / 1e6
        print(f"\n(a) one {a.file_gb:g} GiB file")
        print(f"  openssl dgst -sha256   {t_ossl:7.2f} s  {mb / t_ossl:7.0f} MB/s")
        print(f"  vouch stamp            {t_v:7.2f} s  {mb / t_v:7.0f} MB/s  peak RSS {rss:.0f} MiB")
        print(f"  ratio vouch/openssl    {t_v / t_ossl:7.3f}  (target <= 1.15)")

    if not a.skip_tree:
        tree = os.path.join(work, "tree")
        if not os.path.isdir(tree):
            print(f"copying {a.tree} to {tree} ...", flush=True)
            subprocess.run(["cp", "-a", a.tree, tree], check=False)
        files, size = tree_stats(tree)
        warm(tree)
        mb = size / 1e6
        xargs = f"cd {tree} && find . -type f -print0 | xargs -0 -n500 -P{nproc}"
        t_sum, _ = best(f"{xargs} sha256sum", a.runs)
        t_ossl, _ = best(f"{xargs} openssl dgst -sha256", a.runs)
        tout = os.path.join(work, "tree.vouch")
        t_v, rss_v = best([vouch, "stamp", tree, "--key", key, "--base", work, "--out", tout],
                          a.runs)
        t_vv, rss_vv = best([vouch, "stamp", "verify", tout, "--base", work, "--pub", key + ".pub",
                             "--format", "json"], a.runs)
        print(f"\n(b) tree {a.tree}: {files} regular files, {mb:.0f} MB")
        for name, t, rss in [
            (f"sha256sum -P{nproc}", t_sum, None),
            (f"openssl dgst -P{nproc}", t_ossl, None),
            ("vouch stamp", t_v, rss_v),
            ("vouch stamp verify", t_vv, rss_vv),
        ]:
            extra = f"  peak RSS {rss:.0f} MiB" if rss is not None else ""
            print(f"  {name:22} {t:7.2f} s  {files / t:9.0f} files/s  {mb / t:6.0f} MB/s{extra}")
        print(f"  stamp:  sha256sum/vouch {t_sum / t_v:5.2f}x (target >= 2)   vouch/openssl {t_v / t_ossl:5.2f} (target <= 1.3)")
        print(f"  verify: sha256sum/vouch {t_sum / t_vv:5.2f}x (target >= 2)   vouch/openssl {t_vv / t_ossl:5.2f} (target <= 1.3)")

    if a.million:
        mdir = os.path.join(work, "million")
        if not os.path.isdir(mdir):
            print("creating 1,000,000 files ...", flush=True)
            for d in range(1000):
                sub = os.path.join(mdir, f"d{d:03}")
                os.makedirs(sub)
                for f in range(1000):
                    with open(os.path.join(sub, f"file-{f:04}.txt"), "w") as fh:
                        fh.write(f"{d}/{f}\n")
        mout = os.path.join(work, "million.vouch")
        t_v, rss_v = best([vouch, "stamp", mdir, "--key", key, "--base", work, "--out", mout], 1)
        t_vv, rss_vv = best([vouch, "stamp", "verify", mout, "--base", work, "--pub", key + ".pub",
                             "--format", "json"], 1)
        print("\n(c) 1,000,000 files")
        print(f"  vouch stamp            {t_v:7.2f} s  peak RSS {rss_v:.0f} MiB  (target < 200)")
        print(f"  vouch stamp verify     {t_vv:7.2f} s  peak RSS {rss_vv:.0f} MiB  (target < 200)")
        print(f"  receipt size           {os.path.getsize(mout) / 1e6:.0f} MB")


if __name__ == "__main__":
    main()
