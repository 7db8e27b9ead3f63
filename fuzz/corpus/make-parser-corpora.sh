#!/bin/sh
# Regenerates the binary-made seeds of the parser fuzz corpora (see
# README.md here). Run from the repository root after `cargo build`:
#   sh fuzz/corpus/make-parser-corpora.sh
# It writes into a temporary directory and copies the small files into
# fuzz/corpus/NAME/. The hand-made seeds (hostile-*, hand-*) are kept
# in git as they are and not touched here.
set -eu
V=${VOUCH:-$PWD/target/debug/vouch}
C=$PWD/fuzz/corpus
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
cd "$W"
"$V" keygen --origin fuzz.example/log --out k >/dev/null
mkdir -p tree/sub 'tree/odd name'
printf 'alpha\n' > tree/a.txt
printf 'beta\n' > tree/sub/b
printf '' > 'tree/odd name/#x'
ln -s a.txt tree/l

# Stamp receipts and per-file proofs.
"$V" stamp --key k --out run.vouch tree >/dev/null
"$V" stamp --key k --subjects files --meta agent=fuzz --out files.vouch tree >/dev/null
printf 'stream\n' | "$V" stamp --key k --name stdin.txt --out stream.vouch - >/dev/null
"$V" append --key k log.jsonl '{"event":"x"}' >/dev/null
"$V" stamp --key k --log log.jsonl --out logged.vouch tree/a.txt >/dev/null
for r in run files stream logged; do cp $r.vouch "$C/stamp_receipt/bin-$r"; done
"$V" stamp extract --out a.vouch run.vouch tree/a.txt >/dev/null 2>&1
"$V" stamp extract --out b.vouch files.vouch tree/sub/b >/dev/null 2>&1
"$V" stamp extract --out l.vouch run.vouch tree/l >/dev/null 2>&1
for r in a b l; do cp $r.vouch "$C/stamp_proof/bin-extract-$r"; done
cp run.vouch "$C/stamp_proof/bin-run"

# Drift: snapshots of a directory (with rules), a config, an mtree export.
cat > rules.toml <<'R'
exclude = ["**/*.tmp"]
attributes = ["mtime"]
growing = ["sub/*"]
[[ignore]]
paths = ["odd name/**"]
attributes = ["mode"]
R
cp rules.toml "$C/drift_rules/bin-rules.toml"
printf '{"a":[1,2.5,"x"],"b":{"c":null,"d":true}}\n' > conf.json
printf 'a:\n  - 1\n  - x\nb: {c: null, d: true}\n' > conf.yaml
printf 'a = [1, "x"]\n[b]\nd = true\nwhen = 1979-05-27T07:32:00Z\n' > conf.toml
"$V" drift snapshot --log d.jsonl --key k --rules rules.toml tree >/dev/null
"$V" drift snapshot --log d.jsonl --key k conf.json >/dev/null
"$V" drift snapshot --log d.jsonl --key k conf.yaml >/dev/null
"$V" drift snapshot --log d.jsonl --key k conf.toml >/dev/null
for f in d.jsonl.vouch-drift/*.jsonl; do
  kind=$(head -n1 "$f" | sed 's/.*"kind":"\([a-z]*\)".*/\1/')
  fmt=$(head -n1 "$f" | sed -n 's/.*"syntax":"\([a-z]*\)".*/-\1/p')
  cp "$f" "$C/drift_snapshot/bin-$kind$fmt"
done
"$V" drift export --log d.jsonl --pub k.pub --spec-format mtree tree > spec.mtree
cp spec.mtree "$C/mtree_import/bin-export"
cp conf.json "$C/drift_config_json/bin-conf"
cp conf.yaml "$C/drift_config_yaml/bin-conf"
cp conf.toml "$C/drift_config_toml/bin-conf"

# Verify state.
"$V" checkpoint --key k log.jsonl >/dev/null
"$V" verify --pub k.pub --state vs.json log.jsonl >/dev/null
cp vs.json "$C/verify_state/bin-one-log"
"$V" append --key k log.jsonl '{"event":"y"}' >/dev/null
"$V" checkpoint --key k log.jsonl >/dev/null
# d.jsonl has records after its last checkpoint: exit 1 (partial), state written.
"$V" verify --pub k.pub --state vs.json log.jsonl d.jsonl >/dev/null || true
cp vs.json "$C/verify_state/bin-two-logs"
