#!/usr/bin/env bash
# The cost of TLS: one model run by two sci-run processes over loopback TCP, plain and
# with TLS 1.3 (pinned certificates from sci-keygen), alternating, RUNS times each;
# prints each run's client wall time and bytes, and the medians. Communication counted
# by sci (plaintext bytes) is the same in both modes; TLS adds its records on the wire
# and the encryption time.
#
# usage: scripts/bench-tls.sh [MODEL]   (MODEL: lenet minionn squeezenet; default minionn)
# env:   RUNS=3  THREADS=1  OUT=target/bench-tls  BITS=32  SCALE=12
#        OT=iknp|silent (the plan's OT engine; default iknp, as docs/performance.md's figures)
set -euo pipefail
cd "$(dirname "$0")/.."
MODEL=${1:-minionn}
RUNS=${RUNS:-3}
THREADS=${THREADS:-1}
OUT=${OUT:-target/bench-tls}
BITS=${BITS:-32}
SCALE=${SCALE:-12}
OT=${OT:-iknp}
case $MODEL in
  lenet) onnx=testdata/digits/digits_lenet.onnx input=testdata/digits/samples/digit_3.npy ;;
  minionn) onnx=testdata/bench/minionn_cifar.onnx input=testdata/bench/minionn_cifar.cases/0/input_0.npy ;;
  squeezenet) onnx=testdata/bench/squeezenet.onnx input=testdata/bench/squeezenet.cases/0/input_0.npy ;;
  *) echo "unknown model $MODEL" >&2; exit 1 ;;
esac

cargo build --release -q -p sci-compiler --bin sci-compile -p sci-cli --bin sci-run --bin sci-keygen
TARGET=$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')
BIN=$TARGET/release
rm -rf "$OUT" && mkdir -p "$OUT"
"$BIN/sci-compile" "$onnx" -o "$OUT/plan.bin" --client-plan "$OUT/client.bin" --bits "$BITS" --scale "$SCALE" --ot "$OT" > /dev/null
"$BIN/sci-keygen" --out "$OUT" --name server > /dev/null
"$BIN/sci-keygen" --out "$OUT" --name client > /dev/null
server_tls=(--key "$OUT/server.key" --cert "$OUT/server.crt" --peer-cert "$OUT/client.crt")
client_tls=(--key "$OUT/client.key" --cert "$OUT/client.crt" --peer-cert "$OUT/server.crt")

# One two-process run; prints "seconds bytes" of the client's report.
run() {
  local mode=$1 k=$2 stls=() ctls=()
  if [ "$mode" = tls ]; then stls=("${server_tls[@]}"); ctls=("${client_tls[@]}"); fi
  "$BIN/sci-run" --party 0 "$OUT/plan.bin" --listen 127.0.0.1:0 --threads "$THREADS" "${stls[@]}" \
    2> "$OUT/server_$mode$k.log" &
  local srv=$! addr=""
  for _ in $(seq 200); do
    addr=$(sed -n 's/^sci-run: listening on //p' "$OUT/server_$mode$k.log")
    [ -n "$addr" ] && break
    sleep 0.05
  done
  "$BIN/sci-run" --party 1 "$OUT/client.bin" --connect "$addr" --threads "$THREADS" "${ctls[@]}" \
    --input "$input" --output "$OUT/y_$mode$k.npy" --report "$OUT/client_$mode$k.json" \
    > /dev/null 2> "$OUT/client_$mode$k.log"
  wait "$srv"
  python3 -c "import json,sys; t=json.load(open(sys.argv[1]))['parties'][0]['totals']; print(t['seconds'], t['bytes_sent'] + t['bytes_recv'])" "$OUT/client_$mode$k.json"
}

plain=() tls=()
for k in $(seq "$RUNS"); do
  read -r s b < <(run plain "$k"); plain+=("$s"); echo "plain run $k: $s s, $b B"
  read -r s b < <(run tls "$k"); tls+=("$s"); echo "tls   run $k: $s s, $b B"
  cmp -s "$OUT/y_plain$k.npy" "$OUT/y_tls$k.npy" || { echo "outputs differ" >&2; exit 1; }
done
python3 - "${plain[*]}" "${tls[*]}" <<'PY'
import statistics, sys
p = [float(x) for x in sys.argv[1].split()]
t = [float(x) for x in sys.argv[2].split()]
mp, mt = statistics.median(p), statistics.median(t)
print(f"median plain {mp:.2f} s, TLS {mt:.2f} s: TLS/plain {mt / mp:.3f}")
PY
