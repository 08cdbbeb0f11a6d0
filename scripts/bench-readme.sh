#!/usr/bin/env bash
# Benchmark guard for the docs: re-runs every figure that docs/performance.md,
# runtime/README.md and compiler/README.md quote and prints each beside the
# quoted value, so that a change which moves a figure by more than the machine's
# noise is seen before it lands (then re-measure and replace the figure, with its
# date).
#
# usage: scripts/bench-readme.sh [GROUP...]
#   GROUP: ot (OT engine table, primitives), proto (protocol communication and
#   speed tables), matmul (OT-based products), models (docs/performance.md's
#   SqueezeNet loopback table, by scripts/bench-models.sh, alternating the engines),
#   predicted (its exact predicted-network table, by scripts/bench-net.sh),
#   accuracy (docs/performance.md and compiler/README accuracy);
#   default: all of them (about half an hour on the 2-core machine).
# env:   RUNS=3 (sci-bench runs per figure: the median is printed)
#
# Bytes, bits and rounds are deterministic and must match exactly; times are
# medians of RUNS runs and vary with the load (printed first, `uptime`).
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${RUNS:-3}
GROUPS_=("$@")
[ ${#GROUPS_[@]} -eq 0 ] && GROUPS_=(ot proto matmul models predicted accuracy)
cargo build --release -q -p sci-cli --bin sci-bench
TARGET=$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')
B=$TARGET/release/sci-bench
echo "# $(date -u '+%F %T UTC'), load: $(uptime | sed 's/.*load average: //'), RUNS=$RUNS"

# bench NAME QUOTED -- ARGS...: QUOTED is "wall s | CPU s | bits/op | rounds" as the
# README gives it; prints it beside the medians of RUNS runs of `sci-bench ARGS --ot
# iknp --json` (every figure checked here is the IKNP engine's, the paper's; sci-bench's
# default engine is silent).
bench() {
  local name=$1 quoted=$2
  shift 3
  local runs=()
  for _ in $(seq "$RUNS"); do runs+=("$("$B" "$@" --ot iknp --json)"); done
  python3 - "$name" "$quoted" "${runs[@]}" <<'PY'
import json, statistics, sys
name, quoted, *runs = sys.argv[1:]
rs = [json.loads(r) for r in runs]
med = lambda k: statistics.median(r.get(k, 0) for r in rs)
got = f"{med('seconds'):.3g} | {med('cpu_seconds'):.3g} | {rs[0]['bits_per_op']:.2f} | {rs[0]['rounds']}"
print(f"| {name} | {quoted} | {got} |")
PY
}

header() {
  echo
  echo "## $1"
  echo "| figure | quoted: wall s, CPU s, bits/op, rounds | measured (median of $RUNS) |"
  echo "|---|---|---|"
}

for g in "${GROUPS_[@]}"; do
  case $g in
  ot)
    header "runtime/README.md: OT engine (n = 2^20)"
    bench "COT_32, 1 thread" "0.068–0.10 | 0.09 | 160.031 | 2" -- cot --n 1048576 --bits 32
    bench "COT_32, 2 threads" "0.057 | 0.10 | 160.063 | 2" -- cot --n 1048576 --bits 32 --threads 2
    bench "KKOT_{16,2}, 1 thread" "0.27 | 0.35 | 288.063 | 2" -- kkot --n 1048576 --bits 2 --kkot-n 16
    bench "KKOT_{16,2}, 2 threads" "0.19 | 0.37 | 288.125 | 2" -- kkot --n 1048576 --bits 2 --kkot-n 16 --threads 2
    bench "OT_32, 1 thread" "0.073 | 0.12 | 192.031 | 2" -- ot --n 1048576 --bits 32
    echo
    echo "primitives (quoted: TCCR ≈4.7 ns, re-keyed AES-256 VAES ≈6 ns, aes crate ≈100 ns; transpose 128×2^20 14 ms, 128×2^14 0.05 ms):"
    "$B" hash --n 200000 --json
    "$B" transpose --n 1048576 --json
    "$B" transpose --n 16384 --json
    ;;
  proto)
    header "runtime/README.md: protocol communication (ℓ = 32, n = 2^16; rounds here include the set-up's)"
    bench "mill m = 4" "– | – | 3845.00 | 5" -- mill --bits 32 --n 65536 --m 4
    bench "mill m = 7" "– | – | 2931.00 | 6" -- mill --bits 32 --n 65536 --m 7
    bench "relu m = 4" "– | – | 4150.01 | 6" -- relu --bits 32 --n 65536 --m 4
    bench "relu m = 7" "– | – | 3236.01 | 7" -- relu --bits 32 --n 65536 --m 7
    bench "trunc s = 12, m = 7" "– | – | 4231.51 | 11" -- trunc --bits 32 --n 65536 --m 7 --scale 12
    bench "div d = 49, m = 8" "– | – | 5023.51 | 9" -- div --bits 32 --n 65536 --m 8 --d 49
    header "runtime/README.md: protocol speed (ℓ = 32, n = 2^20, m = 4)"
    for t in 1 2; do
      case $t in 1) q=("4.07 | 3.83 | 4148.1 | 9" "5.35 | 5.02 | 5436.1 | 12" "1.66 | 1.46 | 1444.1 | 6" "35.2 | 32.7 | 33184.1 | 27" "59.3 | 69.8 | 68836.1 | 37") ;;
        2) q=("2.06 | 3.99 | 4148.3 | 9" "5.35 | 5.29 | 5436.2 | 12" "1.59 | 1.56 | 1444.2 | 6" "32.1 | 31.9 | 33184.3 | 27" "69.6 | 69.2 | 68836.3 | 37") ;;
      esac
      bench "relu, $t thread(s)" "${q[0]}" -- relu --bits 32 --n 1048576 --m 4 --threads $t
      bench "trunc s = 12, $t" "${q[1]}" -- trunc --bits 32 --n 1048576 --m 4 --scale 12 --threads $t
      bench "trunc-nonneg s = 12, $t" "${q[2]}" -- trunc-nonneg --bits 32 --n 1048576 --m 4 --scale 12 --threads $t
      bench "maxpool d = 9 narrow, $t" "${q[3]}" -- maxpool --bits 32 --n 1048576 --m 4 --d 9 --narrow --threads $t
      bench "maxpool d = 9 exact, $t" "${q[4]}" -- maxpool --bits 32 --n 1048576 --m 4 --d 9 --threads $t
    done
    ;;
  matmul)
    header "runtime/README.md: OT-based products (ℓ = 32, 1 thread)"
    bench "matmul 3025×144 · 144×64" "3.66 (idle; 5.89 at load 8.3) | 5.74 (3.83 at load 8.3) | 5455882.92 | 2" -- matmul --cols 144 --outs 64 --n 3025
    ;;
  models)
    echo
    echo "## docs/performance.md: SqueezeNet, two processes on loopback, SCI_OT, both engines"
    echo "quoted:"
    sed -n '/^| OT engine | wall time/,/^$/p' docs/performance.md
    echo "measured (alternating, $RUNS pairs):"
    for _ in $(seq "$RUNS"); do
      for ot in iknp silent; do OT=$ot THREADS=2 scripts/bench-models.sh squeezenet | tail -n 1; done
    done
    ;;
  predicted)
    echo
    echo "## docs/performance.md: predicted network table (exact: must match)"
    echo "quoted:"
    sed -n '/^| model | ℓ | backend (OT engine)/,/^$/p' docs/performance.md
    echo "predicted now:"
    for ot in iknp silent; do OT=$ot BACKENDS="ot he" scripts/bench-net.sh minionn squeezenet; done
    ;;
  accuracy)
    echo
    echo "## docs/performance.md: digits accuracy (quoted: 98.06% secure and fixed point, 360 inferences in 3.4 s on silent)"
    cargo test --release -q -p sci --test accuracy -- --nocapture 2>&1 | grep -v '^$' | tail -n 12
    echo
    echo "## compiler/README.md: measured accuracy"
    sed -n '/^## Measured accuracy/,/^`--scales/p' compiler/README.md | grep '^|'
    cargo test --release -q -p sci-compiler --test accuracy -- --nocapture 2>&1 | grep -v '^$' | tail -n 12
    ;;
  *) echo "unknown group $g (ot proto matmul models predicted accuracy)" >&2; exit 1 ;;
  esac
done
