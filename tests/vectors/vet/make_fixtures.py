#!/usr/bin/env python3
"""Writes fixtures.jsonl, the labelled evaluation set of the `vouch::vet::scan`
scanner (see README.md).

    python3 tests/vectors/vet/make_fixtures.py           # rewrite fixtures.jsonl
    python3 tests/vectors/vet/make_fixtures.py --check   # exit 1 if it would change

Inputs, all next to this script: official.json (the official servers' listings,
written by list_official.mjs), poisoned.py and benign.py (hand-written fixtures),
vetlib.py (helpers). Output: one JSON object per line, ASCII only (every other
character as a \\u escape, astral ones as surrogate pairs), keys in a fixed
order, so the file diffs and reviews cleanly.

Split: within each stratum (each poisoned family; the benign set), fixtures are
ordered by SHA-256 of their id and the first ceil(n/2) go to "dev", the rest to
"test". Deterministic, and stable when fixtures are appended to a stratum only
as far as ids keep their hashes (they do: ids are never reused).
"""

import hashlib
import json
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.dont_write_bytecode = True
sys.path.insert(0, HERE)

import vetlib  # noqa: E402
import poisoned  # noqa: E402,F401  (registers fixtures)

OFFICIAL_NOTES = {
    "server-everything": "reference server of the MCP project, exact tools/list entry",
    "server-filesystem": "reference server of the MCP project, exact tools/list entry",
}


def add_official():
    with open(os.path.join(HERE, "official.json"), encoding="utf-8") as f:
        off = json.load(f)
    for srv in off["servers"]:
        pkg = srv["package"]  # @modelcontextprotocol/server-everything@2026.8.31
        short = pkg.split("/", 1)[1]
        name = short.rsplit("@", 1)[0]
        source = "official:" + short
        for tool in srv["tools"]:
            vetlib.benign("off", "%s: %s (%s)" % (name, tool["name"], OFFICIAL_NOTES[name]), tool=tool,
                          source=source)
        if srv.get("instructions"):
            vetlib.benign("off", "%s: server instructions, exact text" % name,
                          instructions=srv["instructions"], source=source)


def assign_splits(fixtures):
    strata = {}
    for fx in fixtures:
        strata.setdefault(fx["family"] if fx["label"] == "poisoned" else "benign", []).append(fx)
    for items in strata.values():
        items.sort(key=lambda fx: hashlib.sha256(fx["id"].encode()).hexdigest())
        half = (len(items) + 1) // 2
        for i, fx in enumerate(items):
            fx["split"] = "dev" if i < half else "test"


def render(fixtures):
    lines = [json.dumps(fx, ensure_ascii=True, separators=(", ", ": ")) for fx in fixtures]
    return "\n".join(lines) + "\n"


def main():
    add_official()
    import benign  # noqa: F401  (registers fixtures, after the official ones)

    fixtures = vetlib.FIXTURES
    ids = [fx["id"] for fx in fixtures]
    assert len(ids) == len(set(ids)), "duplicate ids"
    for fx in fixtures:  # ids named in notes (rug pulls and their originals) exist
        for ref in re.findall(r"\b[pb]-[a-z]+-\d{3}\b", fx["note"]):
            assert ref in ids, (fx["id"], ref)
    assign_splits(fixtures)
    text = render(fixtures)
    out = os.path.join(HERE, "fixtures.jsonl")
    if "--check" in sys.argv[1:]:
        with open(out, encoding="ascii") as f:
            if f.read() != text:
                print("fixtures.jsonl is stale: run tests/vectors/vet/make_fixtures.py", file=sys.stderr)
                sys.exit(1)
    else:
        with open(out, "w", encoding="ascii", newline="\n") as f:
            f.write(text)
    summary(fixtures)


def summary(fixtures):
    from collections import Counter

    c = Counter()
    for fx in fixtures:
        key = fx["family"] if fx["label"] == "poisoned" else "benign"
        c[(key, fx["split"])] += 1
        c[(key, "all")] += 1
    print("%-15s %5s %5s %5s" % ("stratum", "all", "dev", "test"), file=sys.stderr)
    for key in list(vetlib.FAMILIES) + ["benign"]:
        print("%-15s %5d %5d %5d" % (key, c[(key, "all")], c[(key, "dev")], c[(key, "test")]), file=sys.stderr)
    langs = Counter(fx["lang"] for fx in fixtures if fx["lang"] != "en")
    print("non-English: poisoned %d, benign %d; %s" % (
        sum(1 for fx in fixtures if fx["lang"] != "en" and fx["label"] == "poisoned"),
        sum(1 for fx in fixtures if fx["lang"] != "en" and fx["label"] == "benign"),
        ", ".join("%s %d" % kv for kv in sorted(langs.items()))), file=sys.stderr)


if __name__ == "__main__":
    main()
