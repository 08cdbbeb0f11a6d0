#!/usr/bin/env bash
# docs/performance.md's "Beside OpenCheetah": sci and OpenCheetah (Huang et al., USENIX
# Security 2022) side by side on this machine, the same model, ring width, scale and
# threads, each system as two processes (server and client), alternating sci / peer REPS
# times per (model, profile), on loopback and on the emulated LAN and WAN. One markdown
# table per (model, profile) with the medians.
#
# usage: PEER_BIN=/path/to/OpenCheetah/build/bin scripts/bench-cheetah.sh [MODEL...]
#        (MODEL: squeezenet resnet50; default both; ResNet-50 is testdata/bench-large,
#        git-ignored: `testdata/.venv/bin/python testdata/generate.py --only bench-large`,
#        which needs only numpy, onnx and onnxruntime, not torch)
#
# PEER_BIN holds OpenCheetah's sqnet-cheetah and resnet50-cheetah, built outside this
# repository (nothing of it is built or downloaded here; docs/performance.md says which
# commit and options, and the one-line fix that lets them end cleanly with nt < 4). They
# are run as `BIN r=1|2 k=SCALE ell=BITS nt=THREADS p=PORT` and read their secret
# inputs as integers (fixed-point at scale k) from stdin: the server its weights, the
# client its image. This script writes random ones once per
# invocation ($OUT/MODEL.{server,client}.inp): pixels uniform in [-2^12, 2^12) (±1);
# SqueezeNet's weights uniform in [-2^8, 2^8) (±1/16); ResNet-50's of magnitude in
# [2^10, 2^12) (1/4 to 1) with a random sign, because resnet50-cheetah folds each
# BatchNorm scale (also read from stdin) into its filters at scale k and aborts on an
# all-zero filter ("conv2DOneFilter: filter with all zero is not supported"), which
# small scales give. The counts are what each binary reads (counted in
# networks/main_{sqnet,resnet50}.cpp). sci runs testdata's model (random He weights) on
# its random case input, compiled by `sci-compile MODEL --bits BITS --scale SCALE
# --threads THREADS --ot OT` (the default backend, RLWE).
#
# env:  PROFILES="loopback lan wan"  REPS=3  THREADS=2  BITS=37  SCALE=12
#       OT=silent (sci's OT engine; the peer's is its Ferret, silent too)
#       PORT=47300 (each run takes fresh ports from here up)  TIMEOUT=1800 (seconds per
#       process; a run past it, or failing, is a "failed" row)  OUT=target/bench-cheetah
#
# The emulated profiles (lan: 377 MB/s, 0.3 ms round trip; wan: 40 MB/s, 80 ms): sci's
# two processes each get `sci-run --net PROFILE`, which paces that party's own sending
# (its `net::emulate` module); the peer's client connects through
# scripts/netem-proxy.py, which applies the same model to both directions of its
# connections (one link per direction shared by the connections, paced to the
# bandwidth, RTT/2 per message). The proxy's CPU is reported apart from the peer's.
#
# Columns (medians of the REPS runs; the runs' walls in brackets):
#   wall = the client process's elapsed time (/usr/bin/time), everything included:
#     start-up, connections, OT set-up, and for the peer reading its inputs as text;
#   timer = each system's own clock: sci's client report `totals.seconds` (after
#     the plan is loaded: connection, set-up and inference), the peer's "Total time taken"
#     (after its one-time set-up: base OTs, Ferret's bootstrapping);
#   comm. = both directions' bytes, set-up included (sci: the client's bytes sent +
#     received; the peer: the two processes' final per-connection "total data sent"),
#     and in brackets without the set-up (sci: minus `setup`; the peer: its "Total comm");
#   rounds = sci's client count (round trips) and the peer's thread-0 NetIO
#     `num_rounds` after set-up, which counts every change of direction (about twice
#     the round trips); not comparable one for one;
#   per layer = seconds inside each kind of layer by the server's clock (sci: the
#     server report's instructions by op; the peer: its "Total time in X"): conv (the
#     peer's Conv + BatchNorm + MatMul; sci's conv2d + matmul + mul), ReLU (sci's relu and
#     relu_trunc, a ReLU with the truncation after it), MaxPool, truncation (sci's other
#     truncs; the peer fuses most into its ReLU too), other (the rest);
#   CPU = user + system seconds of each process (/usr/bin/time -v), peak RSS likewise;
#   load = the range of the 1-minute load average taken after each run.
# Needs /usr/bin/time and python3 (standard library only).
PROFILES=${PROFILES:-loopback lan wan}
REPS=${REPS:-3}
THREADS=${THREADS:-2}
BITS=${BITS:-37}
SCALE=${SCALE:-12}
OT=${OT:-silent}
PORT=${PORT:-47300}
TIMEOUT=${TIMEOUT:-1800}
OUT=${OUT:-target/bench-cheetah}
DEFAULT_MODELS=(squeezenet resnet50)
: "${PEER_BIN:?set PEER_BIN to the directory of the built sqnet-cheetah and resnet50-cheetah}"
for p in $PROFILES; do
  case $p in loopback | lan | wan) ;; *) echo "unknown profile $p (loopback lan wan)" >&2; exit 1 ;; esac
done
. "$(dirname "$0")/bench-common.sh" "$@"

# The peer's binary for model $1.
peer_bin() {
  case $1 in
    squeezenet) echo "$PEER_BIN/sqnet-cheetah" ;;
    resnet50) echo "$PEER_BIN/resnet50-cheetah" ;;
    *) echo "no OpenCheetah binary for $1 (squeezenet resnet50)" >&2; return 1 ;;
  esac
}
# The number of integers each binary's server and client read, and the smallest and
# largest magnitude (exclusive) of the server's.
peer_inputs() {
  case $1 in
    squeezenet) echo "1235496 154587 0 256" ;;
    resnet50) echo "25596841 150528 1024 4096" ;;
  esac
}
for m in "${MODELS[@]}"; do
  bin=$(peer_bin "$m") || exit 1
  [ -x "$bin" ] || { echo "missing $bin" >&2; exit 1; }
done

# $1 random integers, one a line: magnitude uniform in [$2, $3), sign uniform (for
# $2 = 0: uniform in [-$3, $3)).
random_ints() {
  python3 -c 'import random, sys
n, lo, hi = (int(a) for a in sys.argv[1:])
g = random.Random(random.SystemRandom().getrandbits(64))
draw = (lambda: g.randrange(-hi, hi)) if lo == 0 else (lambda: g.choice((-1, 1)) * g.randrange(lo, hi))
sys.stdout.write("".join(f"{draw()}\n" for _ in range(n)))' "$1" "$2" "$3"
}

# Runs both parties of system $1 (sci|peer) for model $2 on profile $3, repetition $4;
# leaves the raw outputs in $OUT/$1.$2.$3.$4.* and appends one JSON line of figures
# (or {"failed": why}) to $OUT/$2.$3.$1.jsonl.
run_pair() {
  local sys=$1 m=$2 prof=$3 raw=$OUT/$1.$2.$3.$4 p=$PORT ok=1 proxy=""
  PORT=$((PORT + 4 * THREADS + 4))
  local net=()
  [ "$prof" = loopback ] || net=(--net "$prof")
  if [ "$sys" = sci ]; then
    local plan=$OUT/$m.plan client=$OUT/$m.client.plan
    /usr/bin/time -v -o "$raw.time0" timeout "$TIMEOUT" "$SCIRUN" --party 0 "$plan" --listen "127.0.0.1:$p" \
      --threads "$THREADS" "${net[@]}" --timeout "$TIMEOUT" --report "$raw.json0" > "$raw.out0" 2>&1 &
    local srv=$!
    /usr/bin/time -v -o "$raw.time1" timeout "$TIMEOUT" "$SCIRUN" --party 1 "$client" --connect "127.0.0.1:$p" \
      --threads "$THREADS" "${net[@]}" --timeout "$TIMEOUT" --input "$(model_input "$m")" --output "$raw.y.npy" \
      --report "$raw.json1" > "$raw.out1" 2>&1 || ok=0
    wait "$srv" || ok=0
  else
    local bin sp=$p
    bin=$(peer_bin "$m")
    if [ "$prof" != loopback ]; then
      # The server listens on sp+i, the client connects to the proxy on p+i.
      sp=$((p + 2 * THREADS))
      python3 scripts/netem-proxy.py --listen "$p" --forward "$sp" --ports "$THREADS" --net "$prof" > "$raw.proxy" 2>&1 &
      proxy=$!
      for _ in $(seq 100); do grep -q '^netem-proxy: ' "$raw.proxy" && break; sleep 0.05; done
    fi
    # In a fresh directory with an empty data/, removed after the run: the peer
    # writes Ferret's pre-OT correlations to ./data/pre_ot_data_* when it ends (and
    # fails without data/), and finding them from an earlier run it would skip
    # Ferret's set-up, reusing them; every run here does its own set-up, as sci's.
    local abs cwd
    abs=$(cd "$OUT" && pwd)
    cwd=$abs/peer-cwd.${raw##*/}
    rm -rf "$cwd" && mkdir -p "$cwd/data"
    (cd "$cwd" && exec /usr/bin/time -v -o "$abs/${raw##*/}.time0" timeout "$TIMEOUT" "$bin" r=1 k="$SCALE" \
      ell="$BITS" nt="$THREADS" p="$sp" < "$abs/$m.server.inp" > "$abs/${raw##*/}.out0" 2>&1) &
    local srv=$!
    sleep 0.3
    (cd "$cwd" && exec /usr/bin/time -v -o "$abs/${raw##*/}.time1" timeout "$TIMEOUT" "$bin" r=2 k="$SCALE" \
      ell="$BITS" nt="$THREADS" p="$p" < "$abs/$m.client.inp" > "$abs/${raw##*/}.out1" 2>&1) || ok=0
    wait "$srv" || ok=0
    rm -rf "$cwd"
    if [ -n "$proxy" ]; then
      # The proxy's CPU seconds (utime + stime of /proc/PID/stat), then stop it.
      if [ -r "/proc/$proxy/stat" ]; then
        awk -v hz="$(getconf CLK_TCK)" '{ printf "%.2f\n", ($14 + $15) / hz }' "/proc/$proxy/stat" > "$raw.proxycpu"
      fi
      kill "$proxy" 2> /dev/null || true
      wait "$proxy" || true
    fi
  fi
  python3 - "$sys" "$raw" "$ok" "$THREADS" "$(cut -d' ' -f1 /proc/loadavg)" >> "$OUT/$m.$prof.$sys.jsonl" <<'EOF'
import json, re, sys
from collections import defaultdict
sys_, raw, ok, threads, load = sys.argv[1], sys.argv[2], sys.argv[3] == "1", int(sys.argv[4]), sys.argv[5]

def timev(i):
    t = open(f"{raw}.time{i}").read()
    get = lambda k: re.search(re.escape(k) + r": (.*)", t).group(1)
    h, _, rest = get("Elapsed (wall clock) time (h:mm:ss or m:ss)").rpartition(":")
    wall = float(rest) + sum(float(x) * 60 ** (j + 1) for j, x in enumerate(reversed(h.split(":")))) if h else float(rest)
    return wall, float(get("User time (seconds)")) + float(get("System time (seconds)")), int(get("Maximum resident set size (kbytes)")) / 1024

def group(op):
    return {"conv2d": "conv", "matmul": "conv", "mul": "conv", "relu": "relu", "relu_trunc": "relu", "maxpool": "maxpool", "trunc": "trunc"}.get(op, "other")

if not ok:
    last = lambda i: (open(f"{raw}.out{i}", errors="replace").read().strip().splitlines() or [""])[-1]
    print(json.dumps({"failed": f"server: {last(0)[-150:]}; client: {last(1)[-150:]}", "load": load}))
    sys.exit()
(w0, c0, r0), (w1, c1, r1) = timev(0), timev(1)
row = {"wall": w1, "cpu": [c0, c1], "rss": [r0, r1], "load": load}
layers = defaultdict(float)
if sys_ == "sci":
    srv, cli = (json.load(open(f"{raw}.json{i}"))["parties"][0] for i in (0, 1))
    tot = cli["totals"]
    row["timer"] = tot["seconds"]
    row["bytes"] = tot["bytes_sent"] + tot["bytes_recv"]
    row["bytes_run"] = row["bytes"] - cli["setup"]["bytes_sent"] - cli["setup"]["bytes_recv"]
    row["rounds"] = tot["rounds"]
    for ins in srv["instructions"]:
        layers[group(ins["op"])] += ins.get("seconds", 0.0)
else:
    outs = [open(f"{raw}.out{i}", errors="replace").read() for i in (0, 1)]
    num = lambda pat, s: float(re.findall(pat, s)[-1])
    row["timer"] = num(r"Total time taken = (\d+) milliseconds", outs[1]) / 1000
    # Each connection's final counter: the last THREADS "total data sent till now" lines.
    sent = [sum(int(x) for x in re.findall(r"total data sent till now = (\d+)", s)[-threads:]) for s in outs]
    row["bytes"] = sum(sent)
    row["bytes_run"] = num(r"Total comm \(sent\+received\) = ([\d.e+]+) MiB", outs[0]) * 2**20
    row["rounds"] = int(num(r"Number of rounds = (\d+)", outs[1]))
    peer = {"Conv": "conv", "BatchNorm": "conv", "MatMul": "conv", "Relu": "relu", "MaxPool": "maxpool", "Truncation": "trunc"}
    for name, secs in re.findall(r"Total time in (\w+) = ([\d.e+-]+) seconds", outs[0]):
        layers[peer.get(name, "other")] += float(secs)
    try:
        row["proxy_cpu"] = float(open(f"{raw}.proxycpu").read())
    except FileNotFoundError:
        pass
row["layers"] = layers
print(json.dumps(row))
EOF
}

# Median table of the runs of model $1 on profile $2.
table() {
  python3 - "$OUT/$1.$2" "$1" "$2" "$BITS" "$THREADS" "$OT" <<'EOF'
import json, statistics, sys
base, model, prof, bits, threads, ot = sys.argv[1:]
names = {"sci": f"sci RLWE on {ot} OT (exact)", "peer": "OpenCheetah (approximate ReLU, truncation)"}
print(f"\n{model}, {prof}, ℓ = {bits}, {threads} threads, two processes each\n")
print("| system | wall (each run) | timer | comm. MiB (no set-up) | rounds | conv | ReLU | MaxPool | truncation | other | CPU server / client | peak RSS MiB server / client | proxy CPU | load |")
print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
for sys_ in ("sci", "peer"):
    rows = [json.loads(l) for l in open(f"{base}.{sys_}.jsonl") if l.strip()]
    bad = [r["failed"] for r in rows if "failed" in r]
    if bad:
        print(f"| {names[sys_]} | failed ({len(bad)} of {len(rows)} runs): {bad[0]} |" + " |" * 12)
        continue
    med = lambda f: statistics.median(f(r) for r in rows)
    lay = lambda k: f"{med(lambda r: r['layers'].get(k, 0.0)):.2f} s"
    loads = sorted((r["load"] for r in rows), key=float)
    walls = ", ".join(f"{r['wall']:.1f}" for r in rows)
    proxy = f"{med(lambda r: r['proxy_cpu']):.1f} s" if all("proxy_cpu" in r for r in rows) else "–"
    print(f"| {names[sys_]} | **{med(lambda r: r['wall']):.1f} s** ({walls}) | {med(lambda r: r['timer']):.1f} s "
          f"| {med(lambda r: r['bytes']) / 2**20:,.0f} ({med(lambda r: r['bytes_run']) / 2**20:,.0f}) | {med(lambda r: r['rounds']):.0f} "
          f"| {lay('conv')} | {lay('relu')} | {lay('maxpool')} | {lay('trunc')} | {lay('other')} "
          f"| {med(lambda r: r['cpu'][0]):.1f} / {med(lambda r: r['cpu'][1]):.1f} s "
          f"| {med(lambda r: r['rss'][0]):.0f} / {med(lambda r: r['rss'][1]):.0f} | {proxy} | {loads[0]}–{loads[-1]} |")
EOF
}

echo "PROFILES=\"$PROFILES\" REPS=$REPS THREADS=$THREADS BITS=$BITS SCALE=$SCALE OT=$OT, $(date -u +%FT%TZ)" >&2
for m in "${MODELS[@]}"; do
  file=$(model_file "$m")
  [ -f "$file" ] || { echo "missing $file (see the header); skipping $m" >&2; continue; }
  "$COMPILE" "$file" -o "$OUT/$m.plan" --client-plan "$OUT/$m.client.plan" --bits "$BITS" --scale "$SCALE" \
    --threads "$THREADS" --ot "$OT" --report "$OUT/$m.compile.json" > "$OUT/$m.compile.txt"
  read -r ns nc lo hi <<< "$(peer_inputs "$m")"
  random_ints "$ns" "$lo" "$hi" > "$OUT/$m.server.inp"
  random_ints "$nc" 0 4096 > "$OUT/$m.client.inp"
  for prof in $PROFILES; do
    : > "$OUT/$m.$prof.sci.jsonl" && : > "$OUT/$m.$prof.peer.jsonl"
    for r in $(seq "$REPS"); do
      for sys in sci peer; do
        run_pair "$sys" "$m" "$prof" "$r"
      done
    done
    table "$m" "$prof"
  done
done
