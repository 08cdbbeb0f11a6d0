#!/usr/bin/env bash
# Secure inference benchmarks of whole models: the digits LeNet, MiniONN-CIFAR and
# SqueezeNet (testdata/bench, random weights), compiled at ℓ = 32, s = 12 and run by
# two sci-run processes (server and client) over loopback TCP, each under
# /usr/bin/time -v. Prints one markdown table row per model and thread count: wall
# time, communication (bytes each party sent), rounds, and peak memory (maximum
# resident set size) per party, and the communication of the linear layers (conv2d,
# matmul, mul: OT-based products) apart from the rest (ReLU, truncation, pooling,
# division, output); the JSON reports and time logs stay in $OUT.
#
# usage: scripts/bench-models.sh [MODEL...]   (MODEL: lenet minionn squeezenet; default all)
# env:   THREADS="1 2"  OUT=target/bench-models  BITS=32  SCALE=12  PORT=7171
#        BACKEND=ot|he (SCI_OT, or SCI_HE: HE linear layers over the ℓ-bit field; its key
#        set-up is reported in its own column)
#
# Needs /usr/bin/time (Debian/Ubuntu: apt-get install -y time).
set -euo pipefail
cd "$(dirname "$0")/.."
THREADS=${THREADS:-1}
OUT=${OUT:-target/bench-models}
BITS=${BITS:-32}
SCALE=${SCALE:-12}
BACKEND=${BACKEND:-ot}
PORT=${PORT:-7171}
MODELS=("$@")
[ ${#MODELS[@]} -eq 0 ] && MODELS=(lenet minionn squeezenet)
[ -x /usr/bin/time ] || { echo "needs /usr/bin/time (apt-get install -y time)" >&2; exit 1; }

cargo build --release -q -p sci-compiler --bin sci-compile -p sci-runtime --bin sci-run
TARGET=$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')
COMPILE=$TARGET/release/sci-compile
RUN=$TARGET/release/sci-run
mkdir -p "$OUT"

model_file() {
  case $1 in
    lenet) echo testdata/digits/digits_lenet.onnx ;;
    minionn) echo testdata/bench/minionn_cifar.onnx ;;
    squeezenet) echo testdata/bench/squeezenet.onnx ;;
    *) echo "unknown model $1" >&2; exit 1 ;;
  esac
}
model_input() {
  case $1 in
    lenet) echo testdata/digits/samples/digit_3.npy ;;
    minionn) echo testdata/bench/minionn_cifar.cases/0/input_0.npy ;;
    squeezenet) echo testdata/bench/squeezenet.cases/0/input_0.npy ;;
  esac
}

# Field of a /usr/bin/time -v log.
field() { grep "$2" "$1" | sed 's/.*: //'; }
# Peak RSS in MiB.
peak() { awk -v k="$(field "$1" 'Maximum resident set size')" 'BEGIN { printf "%.0f", k / 1024 }'; }
# Value at a JSON path of a report (parties[0].totals.KEY).
total() { python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['parties'][0]['totals'][sys.argv[2]])" "$1" "$2"; }

echo "| model | backend | ℓ | threads | wall s (client) | server sent MiB | client sent MiB | total GiB | linear GiB | non-linear GiB | key set-up GiB | rounds | server peak MiB | client peak MiB |"
echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
for m in "${MODELS[@]}"; do
  plan=$OUT/$m.bin client=$OUT/${m}_client.bin
  "$COMPILE" "$(model_file "$m")" -o "$plan" --client-plan "$client" --bits "$BITS" --scale "$SCALE" --backend "$BACKEND" \
    --report "$OUT/$m.compile.json" > "$OUT/$m.compile.txt"
  for t in $THREADS; do
    tag=$OUT/$m.t$t
    /usr/bin/time -v -o "$tag.server.time" "$RUN" --party 0 "$plan" --listen "127.0.0.1:$PORT" \
      --threads "$t" --report "$tag.server.json" --timeout 600 > "$tag.server.out" 2>&1 &
    srv=$!
    /usr/bin/time -v -o "$tag.client.time" "$RUN" --party 1 "$client" --connect "127.0.0.1:$PORT" \
      --threads "$t" --input "$(model_input "$m")" --output "$tag.y.npy" \
      --report "$tag.client.json" --timeout 600 > "$tag.client.out" 2>&1
    wait $srv
    s_sent=$(total "$tag.server.json" bytes_sent)
    c_sent=$(total "$tag.client.json" bytes_sent)
    python3 - "$m" "$BACKEND" "$BITS" "$t" "$(total "$tag.client.json" seconds)" "$s_sent" "$c_sent" \
      "$(total "$tag.client.json" rounds)" "$(peak "$tag.server.time")" "$(peak "$tag.client.time")" \
      "$tag.client.json" <<'PY'
import json, sys
m, backend, bits, t, secs, s, c, rounds, ps, pc, report = sys.argv[1:]
s, c = int(s), int(c)
party = json.load(open(report))["parties"][0]
instrs = party["instructions"]
both = lambda i: i["bytes_sent"] + i["bytes_recv"]
lin = sum(both(i) for i in instrs if i["op"] in ("conv2d", "matmul", "mul"))
rest = sum(both(i) for i in instrs) - lin
keys = both(party["he_keys"]) if party.get("he_keys") else 0
g = 2**30
print(f"| {m} | {backend} | {bits} | {t} | {float(secs):.2f} | {s/2**20:.1f} | {c/2**20:.1f} | {(s+c)/g:.3f} | {lin/g:.3f} | {rest/g:.3f} | {keys/g:.3f} | {rounds} | {ps} | {pc} |")
PY
  done
done
