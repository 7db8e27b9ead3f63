#!/usr/bin/env bash
# Benchmark: `vouch tsa verify` over N tokens in one batch run, against a shell
# loop of `openssl ts -verify` over the same tokens, and against the raw
# signature-verification cost of those tokens (`openssl speed`).
#
# usage: bench/tsa-verify.sh [N] [KEY]      N tokens (default 10000), KEY rsa|p256 (default rsa)
# env:   VOUCH=path/to/vouch (default target/release/vouch; build it with cargo build --release)
#        VOUCH_OLD=path/to/other/vouch  also time this binary on the same tokens, alternating
#               (old, new, old, new, old, new) and print the new/old ratio of the best runs
#               (a paired comparison, e.g. before and after a change)
#        OPENSSL_SAMPLE=M   run the openssl loop over M tokens and scale to N (default: all N)
#        WORK=dir           build the tokens in dir and keep it (default: a temporary folder)
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
N=${1:-10000}
KEY=${2:-rsa}
VOUCH=${VOUCH:-target/release/vouch}
VOUCH=$(cd "$(dirname "$VOUCH")" && pwd)/$(basename "$VOUCH")
SAMPLE=${OPENSSL_SAMPLE:-$N}
DISTINCT=200
if [ -n "${WORK:-}" ]; then
  rm -rf "$WORK"; mkdir -p "$WORK"; work=$WORK     # kept for inspection
else
  work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
fi
cd "$work"

cat > openssl.cnf <<'CNF'
[ req ]
distinguished_name = dn
prompt = no
[ dn ]
CN = unused
[ v3_ca ]
basicConstraints = critical,CA:TRUE
keyUsage = critical,keyCertSign,cRLSign
subjectKeyIdentifier = hash
[ tsa_ok ]
basicConstraints = critical,CA:FALSE
keyUsage = critical,digitalSignature
extendedKeyUsage = critical,timeStamping
subjectKeyIdentifier = hash
[ tsa ]
default_tsa = tsa_config
[ tsa_config ]
serial = ./tsaserial
crypto_device = builtin
signer_digest = sha256
default_policy = 1.2.3.4.1
digests = sha256, sha384, sha512
accuracy = secs:1
ess_cert_id_alg = sha256
CNF
echo 01 > tsaserial
case $KEY in
  rsa) kopt=(-algorithm RSA -pkeyopt rsa_keygen_bits:2048); speed=rsa2048 ;;
  p256) kopt=(-algorithm EC -pkeyopt ec_paramgen_curve:P-256); speed=ecdsap256 ;;
  *) echo "KEY must be rsa or p256" >&2; exit 2 ;;
esac
openssl genpkey "${kopt[@]}" -out root.key 2>/dev/null
openssl req -x509 -new -config openssl.cnf -key root.key -subj "/CN=Bench Root" -days 3650 -extensions v3_ca -out root.pem
openssl genpkey "${kopt[@]}" -out tsa.key 2>/dev/null
openssl req -new -config openssl.cnf -key tsa.key -subj "/CN=Bench TSA" -out tsa.csr
openssl x509 -req -in tsa.csr -CA root.pem -CAkey root.key -set_serial 2 -days 365 -extfile openssl.cnf \
  -extensions tsa_ok -out tsa.pem 2>/dev/null
head -c 4096 /dev/urandom > data
mkdir tok
for i in $(seq 1 $DISTINCT); do
  openssl ts -query -data data -sha256 -cert -out q.tsq 2>/dev/null
  openssl ts -reply -config openssl.cnf -queryfile q.tsq -signer tsa.pem -inkey tsa.key -out "tok/d$i.tsr" 2>/dev/null
done
# The verifier keeps no state between tokens, so copies cost the same as distinct tokens.
for i in $(seq 1 "$N"); do cp "tok/d$(( (i - 1) % DISTINCT + 1 )).tsr" "tok/t$i.tsr"; done
rm tok/d*.tsr

t0=$(date +%s.%N)
/usr/bin/time -f '%U' -o vouch.user "$VOUCH" tsa verify tok/t*.tsr --data data --tsa-ca root.pem --format json > vouch.json
t1=$(date +%s.%N)
vouch_s=$(echo "$t1 - $t0" | bc -l)
vouch_user=$(cat vouch.user)

if [ -n "${VOUCH_OLD:-}" ]; then
  VOUCH_OLD=$(cd "$(dirname "$VOUCH_OLD")" && pwd)/$(basename "$VOUCH_OLD")
  run_one() {  # prints wall seconds and user CPU seconds of one batch run of $1
    local a b
    a=$(date +%s.%N)
    /usr/bin/time -f '%U' -o one.user "$1" tsa verify tok/t*.tsr --data data --tsa-ca root.pem --format json > one.json \
      || { echo "$1 did not verify every token" >&2; return 1; }
    b=$(date +%s.%N)
    echo "$(echo "$b - $a" | bc -l) $(cat one.user)"
  }
  best_old=999999; best_new=999999; cpu_old=999999; cpu_new=999999
  for round in 1 2 3; do
    out=$(run_one "$VOUCH_OLD"); read -r w c <<< "$out"
    printf 'paired %d old          %.3f s wall, %.2f s CPU\n' "$round" "$w" "$c"
    best_old=$(echo "if ($w < $best_old) $w else $best_old" | bc -l); cpu_old=$(echo "if ($c < $cpu_old) $c else $cpu_old" | bc -l)
    out=$(run_one "$VOUCH"); read -r w c <<< "$out"
    printf 'paired %d new          %.3f s wall, %.2f s CPU\n' "$round" "$w" "$c"
    best_new=$(echo "if ($w < $best_new) $w else $best_new" | bc -l); cpu_new=$(echo "if ($c < $cpu_new) $c else $cpu_new" | bc -l)
  done
  printf 'paired new/old         %.3f wall, %.3f CPU (best of 3 each)\n' \
    "$(echo "$best_new / $best_old" | bc -l)" "$(echo "$cpu_new / $cpu_old" | bc -l)"
fi

t0=$(date +%s.%N)
i=0
for f in tok/t*.tsr; do
  i=$((i + 1)); [ "$i" -gt "$SAMPLE" ] && break
  openssl ts -verify -in "$f" -data data -CAfile root.pem > /dev/null 2>&1 || { echo "openssl rejected $f" >&2; exit 1; }
done
t1=$(date +%s.%N)
openssl_s=$(echo "($t1 - $t0) * $N / $SAMPLE" | bc -l)

# Raw cost: each token needs two signature verifications (token, TSA certificate).
verifies=$(openssl speed -seconds 3 "$speed" 2>/dev/null | awk -v k="$KEY" '
  k == "rsa" && /^rsa 2048/ { print $(NF) }
  k == "p256" && /nistp256\)/ { print $(NF) }' | head -1)
raw_s=$(echo "2 * $N / $verifies" | bc -l)

# Raw cost with vouch's own crypto crates (rsa / p256), one verification.
openssl pkey -in tsa.key -pubout -outform DER -out pub.der
head -c 300 /dev/urandom > msg
openssl dgst -sha256 -sign tsa.key -out sig msg
rust_us=$(cd "$repo" && TSA_BENCH_DIR=$work cargo test -q --release --test tsa_bench_raw -- --ignored --nocapture 2>/dev/null \
  | awk '/RAW_VERIFY_US/ { print $2 }')
rust_raw_s=$(echo "2 * $N * $rust_us / 1000000" | bc -l)

printf 'tokens                 %d (%s, %d distinct)\n' "$N" "$KEY" "$DISTINCT"
printf 'vouch batch            %.2f s wall, %.2f s CPU (%.1f us CPU/token, %d threads)\n' "$vouch_s" "$vouch_user" \
  "$(echo "$vouch_user * 1000000 / $N" | bc -l)" "${RAYON_NUM_THREADS:-$(nproc)}"
printf 'openssl ts loop        %.2f s  (measured over %d, scaled)\n' "$openssl_s" "$SAMPLE"
printf 'raw verify (openssl)   %.2f s  (2 x %s verifies at %s/s)\n' "$raw_s" "$speed" "$verifies"
printf 'raw verify (rust)      %.2f s  (2 x %.1f us per verify, rsa/p256 crates)\n' "$rust_raw_s" "$rust_us"
printf 'speed-up vs loop       %.1fx\n' "$(echo "$openssl_s / $vouch_s" | bc -l)"
printf 'vouch / raw (openssl)  %.2fx\n' "$(echo "$vouch_s / $raw_s" | bc -l)"
printf 'vouch / raw (rust)     %.2fx\n' "$(echo "$vouch_s / $rust_raw_s" | bc -l)"
