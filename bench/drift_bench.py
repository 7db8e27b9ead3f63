#!/usr/bin/env python3
"""Driver for bench/drift.sh: see that script for what is measured."""
import argparse
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile

TIME = "/usr/bin/time"


def drop_caches():
    """Drops the page cache; returns None on success, else why not."""
    try:
        subprocess.run(["sync"], check=True)
        with open("/proc/sys/vm/drop_caches", "w") as f:
            f.write("3\n")
        return None
    except OSError as e:
        return f"{e.strerror or e}"
    except subprocess.CalledProcessError as e:
        return str(e)


def timed(cmd, work, ok=(0,), cold=False):
    """Runs the shell command under /usr/bin/time -f '%e %M'; returns
    (wall s, peak RSS MiB, exit code, stderr tail). Peak RSS is that of the
    largest single process (for a pipeline: the largest member)."""
    if cold:
        drop_caches()
    tfile = os.path.join(work, "time.out")
    argv = [TIME, "-f", "%e %M", "-o", tfile, "sh", "-c", cmd]
    p = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    err = p.stderr.decode(errors="replace")
    with open(tfile) as f:
        # /usr/bin/time writes "Command exited with non-zero status N" first.
        last = f.read().strip().splitlines()[-1].split()
    wall, rss_kib = float(last[0]), int(last[1])
    if p.returncode not in ok:
        sys.exit(f"command failed ({p.returncode}): {cmd}\n{err[-2000:]}")
    return wall, rss_kib / 1024.0, p.returncode, err


def best(cmd, work, runs, ok=(0,), cold=False):
    results = [timed(cmd, work, ok, cold) for _ in range(runs)]
    return min(r[0] for r in results), max(r[1] for r in results)


def tree_stats(root):
    """Regular files and their bytes, symlinks not followed (find -type f)."""
    out = subprocess.run(["find", root, "-type", "f", "-printf", "%s\n"],
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL).stdout
    sizes = [int(x) for x in out.split()]
    return len(sizes), sum(sizes)


def warm(root):
    subprocess.run(f"find {shlex.quote(root)} -type f -print0 | xargs -0 -n1000 cat > /dev/null 2>&1",
                   shell=True, check=False)


def vouch_has_drift(vouch):
    try:
        p = subprocess.run([vouch, "drift", "--help"], stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL)
        return p.returncode == 0
    except OSError:
        return False


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--vouch", required=True)
    ap.add_argument("--tree", default="/usr", help="the tree checked (read only)")
    ap.add_argument("--runs", type=int, default=1, help="best of N for each timed command")
    ap.add_argument("--warm", action="store_true", help="never drop the page cache")
    ap.add_argument("--keep", action="store_true", help="keep the data directory")
    ap.add_argument("--skip-aide", action="store_true")
    ap.add_argument("--skip-hashdeep", action="store_true")
    a = ap.parse_args()
    tree = os.path.abspath(a.tree)
    vouch = os.path.abspath(a.vouch)
    nproc = os.cpu_count() or 1
    base = os.environ.get("VOUCH_BENCH_DIR", "/tmp/vouch-bench-drift")
    os.makedirs(base, exist_ok=True)
    work = tempfile.mkdtemp(prefix="run-", dir=base)
    q = shlex.quote
    try:
        cold = False
        if a.warm:
            cache = "warm cache (--warm)"
        else:
            why = drop_caches()
            if why is None:
                cold = True
                cache = "cold cache (drop_caches before each timed run)"
            else:
                cache = f"warm cache (drop_caches not permitted: {why})"
        if not cold:
            warm(tree)
        files, size = tree_stats(tree)
        mb = size / 1e6
        print(f"machine: {nproc} cores; tree {tree}: {files} regular files, {mb:.0f} MB; {cache}")

        rows = []  # (name, wall, rss, note)

        if not a.skip_aide:
            ver = subprocess.run(["aide", "--version"], stdout=subprocess.PIPE,
                                 stderr=subprocess.STDOUT).stdout.decode(errors="replace")
            ver = ver.splitlines()[0] if ver else "aide"
            db, dbnew = os.path.join(work, "aide.db"), os.path.join(work, "aide.db.new")
            conf = os.path.join(work, "aide.conf")
            with open(conf, "w") as f:
                f.write(f"database_in=file:{db}\n"
                        f"database_out=file:{dbnew}\n"
                        "gzip_dbout=no\n"
                        "report_format=plain\n"
                        "report_url=stdout\n"
                        f"num_workers={nproc}\n"
                        "Vouch = p+ftype+u+g+s+l+sha256\n"
                        f"{re.escape(tree)} Vouch\n")
            t, rss = best(f"aide --init --config={q(conf)}", work, 1, cold=cold)
            rows.append(("aide --init", t, rss, ver))
            os.replace(dbnew, db)
            # Exit 1/2/4 (added/removed/changed) if the tree moved meanwhile.
            t, rss = best(f"aide --check --config={q(conf)}", work, a.runs, ok=range(0, 8), cold=cold)
            rows.append(("aide --check", t, rss, f"num_workers={nproc}"))

        if not a.skip_hashdeep:
            known = os.path.join(work, "known.hashdeep")
            t, rss = best(f"hashdeep -c sha256 -r -j{nproc} {q(tree)} > {q(known)}", work, 1,
                          ok=(0, 1, 2), cold=cold)
            entries = sum(1 for line in open(known, errors="replace")
                          if not line.startswith(("%", "#")))
            rows.append(("hashdeep build", t, rss, f"{entries} entries (follows symlinks)"))
            t, rss = best(f"hashdeep -c sha256 -r -j{nproc} -a -k {q(known)} {q(tree)}", work,
                          a.runs, ok=(0, 1, 2), cold=cold)
            rows.append(("hashdeep audit", t, rss, "content only"))

        t, rss = best(f"find {q(tree)} -type f -print0 | xargs -0 -n500 -P{nproc} sha256sum",
                      work, a.runs, ok=(0, 123), cold=cold)
        rows.append((f"sha256sum -P{nproc}", t, rss, "hashing floor, no metadata"))

        vouch_check = None
        if vouch_has_drift(vouch):
            key, log = os.path.join(work, "drift.key"), os.path.join(work, "drift.vouch")
            subprocess.run([vouch, "keygen", "--origin", "bench.example/drift", "--out", key],
                           check=True, stdout=subprocess.DEVNULL)
            t, rss = best(f"{q(vouch)} drift snapshot {q(tree)} --log {q(log)} --key {q(key)}",
                          work, 1, cold=cold)
            rows.append(("vouch drift snapshot", t, rss, ""))
            check = f"{q(vouch)} drift check {q(tree)} --log {q(log)} --pub {q(key + '.pub')}"
            t, rss = best(check, work, a.runs, ok=(0, 1), cold=cold)
            rows.append(("vouch drift check", t, rss, ""))
            vouch_check = t
            if os.environ.get("VOUCH_SHORTCUT") == "1":
                wall, rss, code, err = timed(check + " --shortcut", work, ok=range(0, 256), cold=cold)
                if code in (0, 1):
                    if a.runs > 1:
                        wall, rss = best(check + " --shortcut", work, a.runs - 1, ok=(0, 1), cold=cold)
                    rows.append(("vouch drift check --shortcut", wall, rss, ""))
                else:
                    print(f"note: `vouch drift check --shortcut` failed ({code}): "
                          f"{err.strip().splitlines()[-1] if err.strip() else ''}")
        else:
            print(f"note: {vouch} has no `drift` subcommand; vouch rows left out")

        aide_check = next((r[1] for r in rows if r[0] == "aide --check"), None)
        print()
        head = f"{'tool':30} {'wall s':>8} {'files/s':>9} {'MB/s':>7} {'RSS MiB':>8} {'t/aide':>7} {'t/vouch':>8}  note"
        print(head)
        print("-" * len(head))
        for name, t, rss, note in rows:
            ra = f"{t / aide_check:7.2f}" if aide_check else f"{'-':>7}"
            rv = f"{t / vouch_check:8.2f}" if vouch_check else f"{'-':>8}"
            print(f"{name:30} {t:8.2f} {files / t:9.0f} {mb / t:7.0f} {rss:8.0f} {ra} {rv}  {note}")
        print("\nt/aide, t/vouch: wall time over that of `aide --check`, `vouch drift check`"
              " (below 1 is faster). files/s and MB/s use the tree's regular files for every tool.")
        if aide_check and vouch_check:
            print(f"aide --check / vouch drift check = {aide_check / vouch_check:.2f}x (target >= 2)")
    finally:
        if a.keep:
            print(f"data kept in {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)
            try:
                os.rmdir(base)
            except OSError:
                pass


if __name__ == "__main__":
    main()
