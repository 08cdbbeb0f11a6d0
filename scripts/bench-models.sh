#!/usr/bin/env bash
# Secure inference benchmarks of whole models: the digits LeNet, MiniONN-CIFAR and
# SqueezeNet (testdata/bench, random weights; or ResNet-50, testdata/bench-large),
# compiled at ℓ = 32 (ResNet-50: 37), s = 12 and run by
# two sci-run processes (server and client) over loopback TCP, each under
# /usr/bin/time -v. Prints one markdown table row per model and thread count: wall
# time, CPU time (user + system) and peak memory (maximum resident set size) per
# party, communication (bytes each party sent), rounds, and the communication of the linear layers (conv2d,
# matmul, mul: OT-based products) apart from the rest (ReLU, truncation, pooling,
# division, output); the JSON reports and time logs stay in $OUT.
#
# usage: scripts/bench-models.sh [MODEL...]   (MODEL: lenet minionn squeezenet resnet50 mobilenetv3;
#        default lenet minionn squeezenet)
# env:   THREADS="1 2"  OUT=target/bench-models  SCALE=12  PORT=7171
#        BITS=ℓ (default 32, and 37 for ResNet-50)
#        BACKEND=ot|he|rlwe (SCI_OT; SCI_HE: HE linear layers over the ℓ-bit field; RLWE:
#        Cheetah-style linear layers over Z_2^ℓ shares, sci-compile's default; the HE
#        backends' key set-up is reported in its own column)
#        OT=iknp|silent (the plan's OT engine, sci-compile --ot; default iknp, the paper's,
#        which docs/performance.md quotes — sci-compile's own default is silent; see
#        scripts/bench-common.sh)
#
# Needs /usr/bin/time (Debian/Ubuntu: apt-get install -y time). The preamble (models,
# build) is shared with scripts/bench-net.sh: scripts/bench-common.sh.
THREADS=${THREADS:-1}
OUT=${OUT:-target/bench-models}
BITS=${BITS:-}
SCALE=${SCALE:-12}
BACKEND=${BACKEND:-ot}
PORT=${PORT:-7171}
DEFAULT_MODELS=(lenet minionn squeezenet)
. "$(dirname "$0")/bench-common.sh" "$@"

# Field of a /usr/bin/time -v log.
field() { grep "$2" "$1" | sed 's/.*: //'; }
# CPU seconds (user + system).
cpu() { awk -v u="$(field "$1" 'User time')" -v s="$(field "$1" 'System time')" 'BEGIN { printf "%.1f", u + s }'; }
# Peak RSS in MiB.
peak() { awk -v k="$(field "$1" 'Maximum resident set size')" 'BEGIN { printf "%.0f", k / 1024 }'; }
# Value at a JSON path of a report (parties[0].totals.KEY).
total() { python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['parties'][0]['totals'][sys.argv[2]])" "$1" "$2"; }

echo "| model | backend | OT | ℓ | threads | wall s (client) | server CPU s | client CPU s | server sent MiB | client sent MiB | total GiB | linear GiB | non-linear GiB | key set-up GiB | rounds | server peak MiB | client peak MiB |"
echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
for m in "${MODELS[@]}"; do
  bits=${BITS:-$(model_bits "$m")}
  plan=$OUT/$m.$OT.bin client=$OUT/${m}_client.$OT.bin
  "$COMPILE" "$(model_file "$m")" -o "$plan" --client-plan "$client" --bits "$bits" --scale "$SCALE" --backend "$BACKEND" \
    --ot "$OT" --report "$OUT/$m.$OT.compile.json" > "$OUT/$m.$OT.compile.txt"
  for t in $THREADS; do
    tag=$OUT/$m.$OT.t$t
    /usr/bin/time -v -o "$tag.server.time" "$SCIRUN" --party 0 "$plan" --listen "127.0.0.1:$PORT" \
      --threads "$t" --report "$tag.server.json" --timeout 600 > "$tag.server.out" 2>&1 &
    srv=$!
    /usr/bin/time -v -o "$tag.client.time" "$SCIRUN" --party 1 "$client" --connect "127.0.0.1:$PORT" \
      --threads "$t" --input "$(model_input "$m")" --output "$tag.y.npy" \
      --report "$tag.client.json" --timeout 600 > "$tag.client.out" 2>&1
    wait $srv
    s_sent=$(total "$tag.server.json" bytes_sent)
    c_sent=$(total "$tag.client.json" bytes_sent)
    python3 - "$m" "$BACKEND" "$OT" "$bits" "$t" "$(total "$tag.client.json" seconds)" \
      "$(cpu "$tag.server.time")" "$(cpu "$tag.client.time")" "$s_sent" "$c_sent" \
      "$(total "$tag.client.json" rounds)" "$(peak "$tag.server.time")" "$(peak "$tag.client.time")" \
      "$tag.client.json" <<'PY'
import json, sys
m, backend, ot, bits, t, secs, cs, cc, s, c, rounds, ps, pc, report = sys.argv[1:]
s, c = int(s), int(c)
party = json.load(open(report))["parties"][0]
instrs = party["instructions"]
both = lambda i: i["bytes_sent"] + i["bytes_recv"]
lin = sum(both(i) for i in instrs if i["op"] in ("conv2d", "matmul", "mul"))
rest = sum(both(i) for i in instrs) - lin
keys = both(party["he_keys"]) if party.get("he_keys") else 0
g = 2**30
print(f"| {m} | {backend} | {ot} | {bits} | {t} | {float(secs):.2f} | {cs} | {cc} | {s/2**20:.1f} | {c/2**20:.1f} | {(s+c)/g:.3f} | {lin/g:.3f} | {rest/g:.3f} | {keys/g:.3f} | {rounds} | {ps} | {pc} |")
PY
  done
done
