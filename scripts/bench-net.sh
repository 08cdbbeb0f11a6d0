#!/usr/bin/env bash
# docs/performance.md's network-profile table: MiniONN-CIFAR (ℓ = 32), SqueezeNet (ℓ = 32) and
# ResNet-50 (ℓ = 37; testdata/bench-large, git-ignored: generate it first with
# `testdata/.venv/bin/python testdata/generate.py --only bench-large`), s = 12, each
# compiled for SCI_OT, SCI_HE, RLWE and --backend auto with --net lan and --net wan. One
# markdown row per (model, backend, profile): the cost model's communication, rounds
# and network time (from `sci-compile --report`), and, for the combinations named in
# RUN, a measured run: `sci-run --local PLAN --net PROFILE --report` under
# /usr/bin/time -v (both parties in one process: the peak RSS is the two parties'
# together), its wall time, bytes, rounds and CPU seconds, and the load average at its
# end (the machine is shared: wall times under load are not the protocol's).
#
# usage: scripts/bench-net.sh [MODEL...]   (MODEL: lenet minionn squeezenet resnet50 mobilenetv3 vittiny;
#        default minionn squeezenet resnet50)
# env:   BACKENDS="ot he rlwe auto"  NETS="lan wan"  THREADS=2  OUT=target/bench-net
#        OT=iknp|silent   the plans' OT engine (default iknp, the paper's; see
#        scripts/bench-common.sh); the backend column names it
#        RUN="minionn:ot:lan resnet50:he:lan ..."   combinations to measure (default none)
#        UPTO_resnet50=VALUE   compile (and measure) ResNet-50 only up to the ONNX value
#        VALUE (sci-compile --output): a prefix of its layers, to extrapolate per layer
#        TIMEOUT=3600   sci-run --timeout: the longest wait for the peer (SCI_HE's server
#        computes ResNet-50's first convolution for longer than sci-run's default 120 s
#        on a loaded machine); a failed run prints its error in the row
#
# Needs /usr/bin/time (Debian/Ubuntu: apt-get install -y time). The preamble (models,
# build) is shared with scripts/bench-models.sh: scripts/bench-common.sh.
BACKENDS=${BACKENDS:-ot he rlwe auto}
NETS=${NETS:-lan wan}
THREADS=${THREADS:-2}
OUT=${OUT:-target/bench-net}
RUN=${RUN:-}
TIMEOUT=${TIMEOUT:-3600}
DEFAULT_MODELS=(minionn squeezenet resnet50)
. "$(dirname "$0")/bench-common.sh" "$@"

echo "| model | ℓ | backend | profile | predicted comm. GiB | predicted rounds | predicted network s | measured wall s | measured comm. GiB | measured rounds | CPU s (user+sys) | peak RSS MiB (both parties) | load avg |"
echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|"
for m in "${MODELS[@]}"; do
  file=$(model_file "$m")
  [ -f "$file" ] || { echo "missing $file (see the header)" >&2; continue; }
  upto_var="UPTO_$m"
  upto=${!upto_var:-}
  name=$m${upto:+-upto-$upto}
  for b in $BACKENDS; do
    for n in $NETS; do
      tag=$OUT/$name.$b.$OT.$n
      "$COMPILE" "$file" -o "$tag.plan" --bits "$(model_bits "$m")" --scale 12 --threads "$THREADS" \
        --backend "$b" --ot "$OT" --net "$n" ${upto:+--output "$upto"} --report "$tag.compile.json" > "$tag.compile.txt"
      measured=""
      if [[ " $RUN " == *" $m:$b:$n "* ]]; then
        if /usr/bin/time -v -o "$tag.time" "$SCIRUN" --local "$tag.plan" --input "$(model_input "$m")" \
          --net "$n" --timeout "$TIMEOUT" --report "$tag.run.json" > "$tag.run.txt" 2>&1; then
          measured="$tag.run.json $tag.time"
        else
          measured="$tag.run.txt"
        fi
      fi
      python3 - "$name" "$(model_bits "$m")" "$b" "$n" "$tag.compile.json" "$(cut -d' ' -f1 /proc/loadavg)" $measured <<'PY'
import json, re, sys
name, bits, backend, net, compiled, load, *run = sys.argv[1:]
c = json.load(open(compiled))
if backend == "auto" and c.get("backend_choice"):
    backend = f"auto → {c['params'].get('backend', '?')}"
backend += f" ({c['params']['ot']})"
t = c["total_cost"]
setup = c["setup_cost"]; keys = c["he_keys_cost"] or {}
g = 2**30
comm = sum(x.get("server_bytes", 0) + x.get("client_bytes", 0) for x in (t, setup, keys))
row = [name, bits, backend, net.upper(), f"{comm/g:.3f}", str(t["rounds"]), f"{c['net']['total_seconds']:.1f}"]
if len(run) == 1:
    err = [l for l in open(run[0]).read().splitlines() if "error" in l]
    row += [("failed: " + (err[-1] if err else "see " + run[0])).replace("|", "/")] + ["—"] * 4 + [load]
elif run:
    report, timelog = run
    r = json.load(open(report))["parties"]
    cl = r[1] if r[1]["party"] == "client" else r[0]
    tot = cl["totals"]
    keysm = cl.get("he_keys") or {}
    log = open(timelog).read()
    f = lambda k: re.search(re.escape(k) + r": (.*)", log).group(1)
    cpu = float(f("User time (seconds)")) + float(f("System time (seconds)"))
    row += [f"{tot['seconds']:.1f}", f"{(tot['bytes_sent'] + tot['bytes_recv'])/g:.3f}",
            str(tot["rounds"]), f"{cpu:.1f}", f"{int(f('Maximum resident set size (kbytes)'))/1024:.0f}", load]
else:
    row += ["—"] * 5 + [load]
print("| " + " | ".join(row) + " |")
PY
    done
  done
done
