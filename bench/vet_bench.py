"""Driver for bench/vet.sh: scans every fixture with `vouch scan`, prints
detection per family and split, the rules that fired, and timing."""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict
from concurrent.futures import ThreadPoolExecutor

FAMILIES = ["injection", "steering", "concealment", "exfiltration", "credentials",
            "secret_field", "hidden_unicode", "encoded_blob"]

ap = argparse.ArgumentParser()
ap.add_argument("--vouch", required=True)
ap.add_argument("--fixtures", default="tests/vectors/vet/fixtures.jsonl")
ap.add_argument("--split", default="all", choices=["dev", "test", "all"])
ap.add_argument("--jobs", type=int, default=1)
ap.add_argument("--json", dest="json_out")
ap.add_argument("--verbose", action="store_true")
ap.add_argument("--keep", action="store_true")
opt = ap.parse_args()

with open(opt.fixtures, encoding="utf-8") as f:
    fixtures = [json.loads(line) for line in f if line.strip()]
if opt.split != "all":
    fixtures = [fx for fx in fixtures if fx["split"] == opt.split]
if not fixtures:
    sys.exit("bench/vet.sh: no fixtures")

tmp = tempfile.mkdtemp(prefix="vouch-vet-bench.")


def doc_of(fx):
    if "tool" in fx:
        return {"tools": [fx["tool"]]}
    return {"instructions": fx["instructions"]}


def verdict_of(report):
    """(verdict, findings) of the single tool or instructions in a report."""
    servers = report.get("servers") or []
    if len(servers) != 1:
        raise ValueError("expected one server, got %d" % len(servers))
    srv = servers[0]
    if srv.get("error"):
        raise ValueError("server error: %s" % srv["error"])
    items = list(srv.get("tools") or [])
    if srv.get("instructions"):
        items.append(srv["instructions"])
    if not items:
        raise ValueError("report names no tool and no instructions")
    order = {"pass": 0, "flagged": 1, "blocked": 2}
    verdict = max((it["verdict"] for it in items), key=lambda v: order[v])
    findings = [x for it in items for x in it.get("findings") or []]
    return verdict, findings


def scan(i_fx):
    i, fx = i_fx
    path = os.path.join(tmp, "%04d.json" % i)
    with open(path, "w", encoding="utf-8") as f:
        json.dump(doc_of(fx), f, ensure_ascii=False)
    t = time.perf_counter()
    p = subprocess.run([opt.vouch, "scan", path, "--format", "json"], capture_output=True)
    ms = (time.perf_counter() - t) * 1e3
    res = {"id": fx["id"], "ms": ms, "rc": p.returncode}
    try:
        if p.returncode not in (0, 1):
            raise ValueError("exit %d: %s" % (p.returncode, p.stderr.decode(errors="replace").strip()[:300]))
        report = json.loads(p.stdout)
        verdict, findings = verdict_of(report)
        res.update(verdict=verdict, findings=findings,
                   ruleset=report.get("ruleset"), report_blocked=bool(report.get("blocked")))
        if (p.returncode == 1) != (verdict == "blocked") or res["report_blocked"] != (verdict == "blocked"):
            res["mismatch"] = "exit %d, report blocked=%s, verdict %s" % (
                p.returncode, res["report_blocked"], verdict)
    except (ValueError, KeyError, TypeError) as e:
        res["error"] = str(e)
    return res


t0 = time.perf_counter()
with ThreadPoolExecutor(max_workers=max(1, opt.jobs)) as ex:
    results = list(ex.map(scan, enumerate(fixtures)))
loop_s = time.perf_counter() - t0

# One batch file with every tool fixture: the scanner's own throughput.
batch_tools = []
for fx in fixtures:
    if "tool" in fx:
        t = dict(fx["tool"])
        t["name"] = "%s__%s" % (t.get("name", ""), fx["id"])
        batch_tools.append(t)
batch_path = os.path.join(tmp, "batch.json")
with open(batch_path, "w", encoding="utf-8") as f:
    json.dump({"tools": batch_tools}, f, ensure_ascii=False)
t = time.perf_counter()
bp = subprocess.run([opt.vouch, "scan", batch_path, "--format", "json"], capture_output=True)
batch_s = time.perf_counter() - t

# ---------------------------------------------------------------- report
rulesets = Counter(json.dumps(r.get("ruleset"), sort_keys=True) for r in results if "ruleset" in r)
print("vouch scan over %s (%d fixtures, split %s, block_at high)" % (opt.fixtures, len(fixtures), opt.split))
for rs, n in rulesets.most_common():
    rs = json.loads(rs) or {}
    print("ruleset %s %s (%d reports)" % (rs.get("version"), rs.get("digest"), n))

by_id = {fx["id"]: fx for fx in fixtures}
rows = defaultdict(Counter)  # (stratum, split) -> counts
fired = defaultdict(Counter)  # stratum -> rule -> fixtures
errors, mismatches, benign_blocked, missed = [], [], [], []
for r in results:
    fx = by_id[r["id"]]
    stratum = fx["family"] if fx["label"] == "poisoned" else "benign"
    if "error" in r:
        errors.append("%s: %s" % (r["id"], r["error"]))
        for sp in (fx["split"], "all"):
            rows[(stratum, sp)]["error"] += 1
        continue
    if "mismatch" in r:
        mismatches.append("%s: %s" % (r["id"], r["mismatch"]))
    v = r["verdict"]
    key = {"blocked": "blocked", "flagged": "flagged", "pass": "missed"}[v]
    for sp in (fx["split"], "all"):
        rows[(stratum, sp)]["n"] += 1
        rows[(stratum, sp)][key] += 1
    for rule in sorted({(x["rule"], bool(x.get("advisory"))) for x in r["findings"]}):
        fired[stratum][rule[0] + (" adv" if rule[1] else "")] += 1
    if stratum == "benign" and v == "blocked":
        benign_blocked.append("%s [%s] %s: %s" % (r["id"], fx["source"], fx["note"], ", ".join(
            "%s@%s" % (x["rule"], x["pointer"]) for x in r["findings"] if not x.get("advisory"))))
    if stratum != "benign" and v == "pass":
        missed.append("%s (%s): %s" % (r["id"], stratum, fx["note"]))

splits = ["dev", "test", "all"] if opt.split == "all" else [opt.split]
for sp in splits:
    print("\nsplit %s" % sp)
    print("%-15s %5s %8s %8s %7s %6s  %s" % ("family", "n", "blocked", "flagged", "missed", "errors", "rate"))
    tot = Counter()
    for fam in FAMILIES:
        c = rows[(fam, sp)]
        tot.update(c)
        n = c["n"]
        print("%-15s %5d %8d %8d %7d %6d  detect %5.1f%%" % (
            fam, n, c["blocked"], c["flagged"], c["missed"], c["error"],
            100.0 * (c["blocked"] + c["flagged"]) / n if n else 0.0))
    n = tot["n"]
    print("%-15s %5d %8d %8d %7d %6d  detect %5.1f%%" % (
        "poisoned", n, tot["blocked"], tot["flagged"], tot["missed"], tot["error"],
        100.0 * (tot["blocked"] + tot["flagged"]) / n if n else 0.0))
    c = rows[("benign", sp)]
    n = c["n"]
    print("%-15s %5d %8d %8d %7d %6d  false-block %4.1f%%  false-flag %4.1f%%" % (
        "benign", n, c["blocked"], c["flagged"], c["missed"], c["error"],
        100.0 * c["blocked"] / n if n else 0.0, 100.0 * (c["blocked"] + c["flagged"]) / n if n else 0.0))

print("\nrules fired (fixtures per rule)")
for stratum in FAMILIES + ["benign"]:
    if fired[stratum]:
        print("  %-15s %s" % (stratum, " ".join("%s:%d" % kv for kv in sorted(fired[stratum].items()))))

if benign_blocked:
    print("\nbenign fixtures BLOCKED (%d):\n  %s" % (len(benign_blocked), "\n  ".join(benign_blocked)))
if missed:
    print("\npoisoned fixtures missed: %d" % len(missed))
    if opt.verbose:
        print("  " + "\n  ".join(missed))
if mismatches:
    print("\nverdict/exit-status mismatches (%d):\n  %s" % (len(mismatches), "\n  ".join(mismatches[:20])))
if errors:
    print("\nerrors (%d):\n  %s" % (len(errors), "\n  ".join(errors[:20])))

ms = sorted(r["ms"] for r in results)
print("\ntiming: %d scans in %.2f s with %d job(s): %.0f fixtures/s; per process p50 %.1f ms, p99 %.1f ms" % (
    len(results), loop_s, opt.jobs, len(results) / loop_s, ms[len(ms) // 2], ms[min(len(ms) - 1, int(len(ms) * 0.99))]))
batch_note = "" if bp.returncode in (0, 1) else " (exit %d: %s)" % (
    bp.returncode, bp.stderr.decode(errors="replace").strip()[:200])
print("batch:  %d tools in one file, one process: %.3f s, %.0f tools/s%s" % (
    len(batch_tools), batch_s, len(batch_tools) / batch_s if batch_s else 0.0, batch_note))

if opt.json_out:
    with open(opt.json_out, "w", encoding="utf-8") as f:
        json.dump(results, f, indent=1)
if opt.keep:
    print("temp files kept in %s" % tmp)
else:
    shutil.rmtree(tmp, ignore_errors=True)
sys.exit(1 if errors else 0)
