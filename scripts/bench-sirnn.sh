#!/usr/bin/env bash
# docs/functions.md's "Beside SIRNN (EzPC SCI)": sci's math protocols and the same
# functions in SIRNN (EzPC's SCI library, as in OpenCheetah's SCI fork), run side by
# side at ring width BITS and scale SCALE on N elements, each system as two processes on
# loopback, alternating sci / peer REPS times per (function, threads); one markdown row
# per (function, system, threads) with the medians.
#
# usage: PEER_BIN=/path/to/peer/bin scripts/bench-sirnn.sh
#
# PEER_BIN holds the peer's ring tests, built outside this repository (nothing of it is
# built or downloaded here): exp-OT, sigmoid-OT, tanh-OT, sqrt-OT, hadamard_product-OT,
# from SCI/tests/test_ring_{exp,sigmoid,tanh,sqrt,hadamard_product}.cpp with the bit
# widths and scales as arguments (bx= by= sx= sy=, N= for the product) and the op's own
# counters printed ("OP Bytes Sent", "OP Time", "OP Rounds"); docs/functions.md says how
# they were built. The peer's OT engine is the one it was built with (USE_CHEETAH=0:
# IKNP, EzPC SCI's; with USE_CHEETAH=1, OpenCheetah's Ferret pack, these tests abort
# "Not implemented"): set OT to the same for sci. The peer's tests hang with nt=2
# (docs/functions.md), hence THREADS=1 by default; a hung run ends at TIMEOUT.
#
# env:  OT=iknp|silent (sci-bench --ot; default iknp)  N=16384  BITS=32  SCALE=12
#       THREADS=1 (e.g. "1 2")  REPS=3  FUNCS="exp sigmoid tanh hadamard sqrt"  PORT=41000
#       TIMEOUT=600 (seconds per process; a run past it, or failing, is a "failed" row)
#       SCI_BENCH=path to a built sci-bench (default: cargo build --release, then
#       target/release/sci-bench)  OUT=target/bench-sirnn (raw outputs)
#
# Columns: bits/element = both directions' bytes·8/N (sci: its JSON's `bytes`, OT
# set-up included; peer: the two processes' "OP Bytes Sent", its base OTs excluded);
# rounds = sci's (round trips the busier party waits for) and the peer's NetIO
# `num_rounds`, which counts every change of direction (about twice the round trips);
# wall = each system's own timer around the operation (sci: after the connections
# are open, OT set-up included; peer: after its base OTs); CPU = user + system seconds
# of both processes over the whole run (/usr/bin/time); max ULP = the peer's printed
# "Max ULP error" (against double precision; sci's, against the real function with
# proven bounds, are in docs/functions.md's first table). `sqrt` is the peer's 1/√x beside sci's
# reciprocal 1/z: different functions, shown for scale only. Needs /usr/bin/time.
set -euo pipefail
cd "$(dirname "$0")/.."

: "${PEER_BIN:?set PEER_BIN to the directory of the built peer test_ring_* binaries}"
OT=${OT:-iknp}
N=${N:-16384}
BITS=${BITS:-32}
SCALE=${SCALE:-12}
THREADS=${THREADS:-1}
REPS=${REPS:-3}
FUNCS=${FUNCS:-exp sigmoid tanh hadamard sqrt}
PORT=${PORT:-41000}
OUT=${OUT:-target/bench-sirnn}
TIMEOUT=${TIMEOUT:-600}
[ -x /usr/bin/time ] || { echo "needs /usr/bin/time (apt-get install -y time)" >&2; exit 1; }
if [ -z "${SCI_BENCH:-}" ]; then
  cargo build --release -q -p sci-cli --bin sci-bench
  TARGET=$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')
  SCI_BENCH=$TARGET/release/sci-bench
fi
mkdir -p "$OUT"

# The peer's binary and its arguments for function $1.
peer_cmd() {
  case $1 in
    exp | sigmoid | tanh | sqrt) echo "$PEER_BIN/$1-OT N=$N bx=$BITS by=$BITS sx=$SCALE sy=$SCALE" ;;
    hadamard) echo "$PEER_BIN/hadamard_product-OT N=$N" ;;
    *) echo "unknown function $1 (exp sigmoid tanh hadamard sqrt)" >&2; return 1 ;;
  esac
}
# sci-bench's subcommand and arguments for function $1.
sci_cmd() {
  case $1 in
    exp | sigmoid | tanh) echo "$1 --scale $SCALE" ;;
    hadamard) echo "secmul --cols 1 --outs 1" ;;
    sqrt) echo "recip --scale $SCALE" ;;
  esac
}
for f in $FUNCS; do
  peer_cmd "$f" > /dev/null
  [ "$f" = hadamard ] || [ -x "$PEER_BIN/$f-OT" ] || { echo "missing $PEER_BIN/$f-OT" >&2; exit 1; }
done

# Runs both parties of system $1 (sci|peer) for function $2 on $3 threads; prints one
# line "bits rounds wall cpu maxulp" (maxulp "-" for sci), or "failed" when a process
# fails or runs past TIMEOUT.
run_pair() {
  local sys=$1 f=$2 t=$3 p=$PORT raw=$OUT/$1-$2-t$3-$4 ok=1
  PORT=$((PORT + 8))
  if [ "$sys" = sci ]; then
    # shellcheck disable=SC2046
    /usr/bin/time -f '%U %S' -o "$raw.time0" timeout "$TIMEOUT" "$SCI_BENCH" $(sci_cmd "$f") --bits "$BITS" --n "$N" \
      --threads "$t" --ot "$OT" --json --party 0 --addr "127.0.0.1:$p" > "$raw.out0" &
    local pid=$!
    sleep 0.3
    # shellcheck disable=SC2046
    /usr/bin/time -f '%U %S' -o "$raw.time1" timeout "$TIMEOUT" "$SCI_BENCH" $(sci_cmd "$f") --bits "$BITS" --n "$N" \
      --threads "$t" --ot "$OT" --json --party 1 --addr "127.0.0.1:$p" > "$raw.out1" || ok=0
    wait "$pid" || ok=0
  else
    local extra="nt=$t"
    [ "$f" = hadamard ] && extra=""
    # shellcheck disable=SC2046
    /usr/bin/time -f '%U %S' -o "$raw.time0" timeout "$TIMEOUT" $(peer_cmd "$f") r=1 p="$p" $extra > "$raw.out0" 2>&1 &
    local pid=$!
    sleep 0.3
    # shellcheck disable=SC2046
    /usr/bin/time -f '%U %S' -o "$raw.time1" timeout "$TIMEOUT" $(peer_cmd "$f") r=2 p="$p" $extra > "$raw.out1" 2>&1 || ok=0
    wait "$pid" || ok=0
  fi
  [ $ok = 1 ] || { echo failed; return; }
  python3 - "$sys" "$N" "$raw" <<'EOF'
import json, re, sys
sys_, n, raw = sys.argv[1], int(sys.argv[2]), sys.argv[3]
cpu = sum(float(x) for i in (0, 1) for x in open(f"{raw}.time{i}").read().split()[-2:])
if sys_ == "sci":
    js = [json.loads(open(f"{raw}.out{i}").read()) for i in (0, 1)]
    # Each process counts both directions of its own lanes: the same bytes.
    bits = js[0]["bytes"] * 8 / n
    rounds = max(j["rounds"] for j in js)
    wall = max(j["seconds"] for j in js)
    ulp = "-"
else:
    outs = [open(f"{raw}.out{i}").read() for i in (0, 1)]
    num = lambda pat, s: float(re.findall(pat, s)[-1])
    bits = sum(num(r"OP Bytes Sent\t(\d+)", s) for s in outs) * 8 / n
    rounds = max(int(num(r"OP Rounds\t(\d+)", s)) for s in outs)
    wall = max(num(r"OP Time\t([\d.]+) ms", s) for s in outs) / 1000
    m = re.findall(r"Max ULP error: (\d+)", outs[0] + outs[1])
    ulp = m[-1] if m else "-"
print(f"{bits:.0f} {rounds} {wall:.3f} {cpu:.2f} {ulp}")
EOF
}

echo "OT=$OT N=$N BITS=$BITS SCALE=$SCALE THREADS=\"$THREADS\" REPS=$REPS, $(date -u +%FT%TZ)" >&2
echo "| function | system | threads | bits / element | rounds | wall s | CPU s | max ULP (printed) | load avg |"
echo "|---|---|---|---|---|---|---|---|---|"
for f in $FUNCS; do
  for t in $THREADS; do
    # The peer's product test runs on one connection.
    [ "$f" = hadamard ] && [ "$t" != "${THREADS%% *}" ] && continue
    : > "$OUT/$f-t$t.sci" && : > "$OUT/$f-t$t.peer"
    for r in $(seq "$REPS"); do
      run_pair sci "$f" "$t" "$r" >> "$OUT/$f-t$t.sci"
      run_pair peer "$f" "$t" "$r" >> "$OUT/$f-t$t.peer"
    done
    load=$(cut -d' ' -f1-3 /proc/loadavg)
    for sys in sci peer; do
      label="$sys ($(sci_cmd "$f" | cut -d' ' -f1), $OT)"
      [ "$sys" = peer ] && label="SIRNN ($(basename "$(peer_cmd "$f" | cut -d' ' -f1)"))"
      tt=$t
      [ "$f" = hadamard ] && [ "$sys" = peer ] && tt=1
      python3 - "$OUT/$f-t$t.$sys" "$f" "$label" "$tt" "$load" <<'EOF'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1]) if l.strip()]
if any(r == ["failed"] for r in rows):
    bad = sum(r == ["failed"] for r in rows)
    print(f"| {sys.argv[2]} | {sys.argv[3]} | {sys.argv[4]} | failed ({bad} of {len(rows)} runs: error or past TIMEOUT) | | | | | {sys.argv[5]} |")
    sys.exit()
med = lambda i: statistics.median(float(r[i]) for r in rows)
ulps = sorted({r[4] for r in rows})
print(f"| {sys.argv[2]} | {sys.argv[3]} | {sys.argv[4]} | {med(0):,.0f} | {med(1):.0f} | {med(2):.3f} | {med(3):.2f} | {'/'.join(ulps)} | {sys.argv[5]} |")
EOF
    done
  done
done
