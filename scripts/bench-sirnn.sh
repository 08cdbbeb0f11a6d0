#!/usr/bin/env bash
# docs/performance.md's "Math functions beside SIRNN": sci's math protocols and the same
# functions in SIRNN (EzPC's SCI library, as in OpenCheetah's SCI fork), run side by
# side at ring width BITS and scale SCALE on N elements, each system as two processes on
# loopback, alternating sci / peer REPS times per (function, threads); one markdown row
# per (function, system, threads) with the medians.
#
# usage: PEER_BIN=/path/to/OpenCheetah/build/bin scripts/bench-sirnn.sh
#
# PEER_BIN holds the peer's ring tests exp-OT, sigmoid-OT, tanh-OT, sqrt-OT,
# hadamard_product-OT, built outside this repository (nothing of it is built or
# downloaded here) from OpenCheetah f71d4d4's SCI/tests/test_ring_{exp,sigmoid,tanh,
# sqrt,hadamard_product}.cpp: configure its build/ with `-DSCI_BUILD_TESTS=ON` (beside
# the options of its own build) and `make -j2 exp-OT sigmoid-OT tanh-OT sqrt-OT
# hadamard_product-OT`, after three edits outside this repository: SCI/src/CMakeLists.txt
# defines the `SCI-OT` target the tests link, which OpenCheetah's CMake no longer does
# (an INTERFACE library of SCI-common, SCI-Math, SCI-LinearOT and OpenMP, with SCI_OT=1
# USE_CHEETAH=0: EzPC SCI's IKNP/KK13 OT pack; with OpenCheetah's Ferret pack these
# tests abort "Not implemented"); each test defines the timer SCI's utils/utils.h
# comments out (clock_start, time_from); and the tests take `bx= by= sx= sy=` (their
# defaults are 16-bit rings; the masks recomputed after parsing), the product test `N=`
# and runs only its signed product, and each prints the operation's NetIO::num_rounds
# ("Op Rounds", summed over the threads) beside its own "... Time" and "... Bytes Sent".
# The peer's tests with nt=2 hang (one worker blocked in B2A inside z_extend, after the
# other thread ended); such a run ends at TIMEOUT and is a "failed" row.
#
# env:  OT="iknp" (sci-bench --ot, one sci row per engine, e.g. "iknp silent"; the peer
#       runs IKNP)  N=16384  BITS=32  SCALE=12  THREADS="1 2"  REPS=3
#       FUNCS="exp sigmoid tanh hadamard rsqrt"  PORT=41000
#       TIMEOUT=60 (seconds per process; a run past it, or failing, is a "failed" row)
#       SCI_BENCH=path to a built sci-bench (default: cargo build --release, then
#       target/release/sci-bench)  OUT=target/bench-sirnn (raw outputs)
#
# Columns: bits/element = both directions' bytes·8/N (sci: its JSON's `bytes`, OT
# set-up included; peer: the two processes' "Bytes Sent", its base OTs excluded);
# model = sci's cost model (`formula_bits_per_op`: the transcript without the OT
# set-up; on silent the COTs at their amortised rate); rounds = sci's (round trips the
# busier party waits for) and the peer's NetIO `num_rounds`, which counts every change
# of direction (about twice the round trips); wall = each system's own timer around the
# operation (sci: after the connections are open, OT set-up included; peer: after its
# base OTs); CPU = user + system seconds of both processes over the whole run
# (/usr/bin/time; the peer's includes drawing its inputs and checking its outputs);
# max ULP = the peer's printed "Max ULP error" (|floor(y·2^s) − floor(f(x)·2^s)| against
# double, over its random inputs); sci's are in docs/functions.md (proven bounds and
# exhaustive/random measurements). The product test runs one connection (its row says
# 1 thread). Needs /usr/bin/time.
set -euo pipefail
cd "$(dirname "$0")/.."

: "${PEER_BIN:?set PEER_BIN to the directory of the built peer test_ring_* binaries}"
OT=${OT:-iknp}
N=${N:-16384}
BITS=${BITS:-32}
SCALE=${SCALE:-12}
THREADS=${THREADS:-1 2}
REPS=${REPS:-3}
FUNCS=${FUNCS:-exp sigmoid tanh hadamard rsqrt}
PORT=${PORT:-41000}
OUT=${OUT:-target/bench-sirnn}
TIMEOUT=${TIMEOUT:-60}
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
    exp | sigmoid | tanh) echo "$PEER_BIN/$1-OT N=$N bx=$BITS by=$BITS sx=$SCALE sy=$SCALE" ;;
    rsqrt) echo "$PEER_BIN/sqrt-OT N=$N bx=$BITS by=$BITS sx=$SCALE sy=$SCALE" ;;
    hadamard) echo "$PEER_BIN/hadamard_product-OT N=$N" ;;
    *) echo "unknown function $1 (exp sigmoid tanh hadamard rsqrt)" >&2; return 1 ;;
  esac
}
# sci-bench's subcommand and arguments for function $1.
sci_cmd() {
  case $1 in
    exp | sigmoid | tanh | rsqrt) echo "$1 --scale $SCALE" ;;
    hadamard) echo "secmul --cols 1 --outs 1" ;;
  esac
}
for f in $FUNCS; do
  peer_cmd "$f" > /dev/null
  bin=$(peer_cmd "$f" | cut -d' ' -f1)
  [ -x "$bin" ] || { echo "missing $bin" >&2; exit 1; }
done

# Runs both parties of system $1 (sci-ENGINE or peer) for function $2 on $3 threads,
# repetition $4; prints one line "bits model rounds wall cpu maxulp" ("-" where a
# system has no such figure), or "failed" when a process fails or runs past TIMEOUT.
run_pair() {
  local sys=$1 f=$2 t=$3 p=$PORT raw=$OUT/$1-$2-t$3-$4 ok=1
  PORT=$((PORT + 8))
  if [ "$sys" != peer ]; then
    local ot=${sys#sci-}
    # shellcheck disable=SC2046
    /usr/bin/time -f '%U %S' -o "$raw.time0" timeout "$TIMEOUT" "$SCI_BENCH" $(sci_cmd "$f") --bits "$BITS" --n "$N" \
      --threads "$t" --ot "$ot" --json --party 0 --addr "127.0.0.1:$p" > "$raw.out0" 2>&1 &
    local pid=$!
    sleep 0.3
    # shellcheck disable=SC2046
    /usr/bin/time -f '%U %S' -o "$raw.time1" timeout "$TIMEOUT" "$SCI_BENCH" $(sci_cmd "$f") --bits "$BITS" --n "$N" \
      --threads "$t" --ot "$ot" --json --party 1 --addr "127.0.0.1:$p" > "$raw.out1" 2>&1 || ok=0
    wait "$pid" || ok=0
  else
    local extra="nt=$t"
    [ "$f" = hadamard ] && extra=""
    # Word splitting intended: the command line, and no thread argument for the product.
    # shellcheck disable=SC2046,SC2086
    /usr/bin/time -f '%U %S' -o "$raw.time0" timeout "$TIMEOUT" $(peer_cmd "$f") r=1 p="$p" $extra > "$raw.out0" 2>&1 &
    local pid=$!
    sleep 0.3
    # shellcheck disable=SC2046,SC2086
    /usr/bin/time -f '%U %S' -o "$raw.time1" timeout "$TIMEOUT" $(peer_cmd "$f") r=2 p="$p" $extra > "$raw.out1" 2>&1 || ok=0
    wait "$pid" || ok=0
  fi
  [ $ok = 1 ] || { echo failed; return; }
  python3 - "$sys" "$N" "$raw" <<'EOF'
import json, re, sys
sys_, n, raw = sys.argv[1], int(sys.argv[2]), sys.argv[3]
cpu = sum(float(x) for i in (0, 1) for x in open(f"{raw}.time{i}").read().split()[-2:])
if sys_ != "peer":
    js = [json.loads(open(f"{raw}.out{i}").read().strip().splitlines()[-1]) for i in (0, 1)]
    # Each process counts both directions of its own lanes: the same bytes.
    bits = js[0]["bytes"] * 8 / n
    model = f"{js[0]['formula_bits_per_op']:.0f}"
    rounds = max(j["rounds"] for j in js)
    wall = max(j["seconds"] for j in js)
    ulp = "-"
else:
    outs = [open(f"{raw}.out{i}").read() for i in (0, 1)]
    num = lambda pat, s: float(re.findall(pat, s)[-1])
    bits = sum(num(r"\w+ Bytes Sent\t(\d+)", s) for s in outs) * 8 / n
    model = "-"
    rounds = max(int(num(r"Op Rounds\t(\d+)", s)) for s in outs)
    wall = max(num(r"\w+ Time\t([\d.]+) ms", s) for s in outs) / 1000
    m = re.findall(r"Max ULP error: (\d+)", outs[0] + outs[1])
    ulp = m[-1] if m else "-"
print(f"{bits:.0f} {model} {rounds} {wall:.3f} {cpu:.2f} {ulp}")
EOF
}

SYSTEMS="$(for o in $OT; do printf 'sci-%s ' "$o"; done)peer"
echo "OT=\"$OT\" N=$N BITS=$BITS SCALE=$SCALE THREADS=\"$THREADS\" REPS=$REPS, $(date -u +%FT%TZ)" >&2
echo "| function | system | threads | bits / element (model) | rounds | wall s (each run) | CPU s | max ULP (peer's test) | load avg |"
echo "|---|---|---|---|---|---|---|---|---|"
for f in $FUNCS; do
  for t in $THREADS; do
    for sys in $SYSTEMS; do : > "$OUT/$f-t$t.$sys"; done
    for r in $(seq "$REPS"); do
      for sys in $SYSTEMS; do
        # The peer's product test runs on one connection: only with the first THREADS.
        [ "$f" = hadamard ] && [ "$sys" = peer ] && [ "$t" != "${THREADS%% *}" ] && continue
        run_pair "$sys" "$f" "$t" "$r" >> "$OUT/$f-t$t.$sys"
      done
    done
    load=$(cut -d' ' -f1-3 /proc/loadavg)
    for sys in $SYSTEMS; do
      label="sci \`$(sci_cmd "$f" | cut -d' ' -f1)\` (${sys#sci-})"
      [ "$sys" = peer ] && label="SIRNN \`$(basename "$(peer_cmd "$f" | cut -d' ' -f1)")\` (iknp)"
      tt=$t
      if [ "$f" = hadamard ] && [ "$sys" = peer ]; then
        [ "$t" = "${THREADS%% *}" ] || continue
        tt=1
      fi
      python3 - "$OUT/$f-t$t.$sys" "$f" "$label" "$tt" "$load" <<'EOF'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1]) if l.strip()]
f, label, t, load = sys.argv[2:]
if not rows or any(r == ["failed"] for r in rows):
    bad = sum(r == ["failed"] for r in rows)
    print(f"| {f} | {label} | {t} | failed ({bad} of {len(rows)} runs: error or past TIMEOUT) | | | | | {load} |")
    sys.exit()
med = lambda i: statistics.median(float(r[i]) for r in rows)
models = sorted({r[1] for r in rows})
model = "" if models == ["-"] else f" ({'/'.join(f'{int(m):,}' for m in models)})"
walls = ", ".join(r[3] for r in rows)
ulps = sorted({r[5] for r in rows})
print(f"| {f} | {label} | {t} | {med(0):,.0f}{model} | {med(2):.0f} | {med(3):.3f} ({walls}) | {med(4):.2f} | {'/'.join(ulps)} | {load} |")
EOF
    done
  done
done
