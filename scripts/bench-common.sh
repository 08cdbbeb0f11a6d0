# Sourced (never run) by scripts/bench-models.sh and scripts/bench-net.sh: the part they
# share. Before sourcing, the caller sets OUT (its output directory) and DEFAULT_MODELS
# (the models to run when none is named), and passes its arguments:
#
#   DEFAULT_MODELS=(minionn squeezenet); OUT=${OUT:-target/bench-x}
#   . "$(dirname "$0")/bench-common.sh" "$@"
#
# It stops on the first error (set -euo pipefail), moves to the repository root, sets
# MODELS (the arguments, or DEFAULT_MODELS; an unknown name is an error before anything
# is built), checks for /usr/bin/time, builds sci-compile and sci-run (release) and sets
# COMPILE and SCIRUN to their paths, creates $OUT, sets OT (the plans' OT engine,
# `sci-compile --ot`: the environment's OT, else iknp — the paper's engine, which the
# docs/performance.md's tables quote; sci-compile's own default is silent), and defines
#   model_file NAME    the model's ONNX file
#   model_input NAME   the input it is run on
#   model_bits NAME    the ring width ℓ the benchmarks use for it (37 for ResNet-50, else 32)
# for NAME in: lenet (the digits LeNet), minionn (MiniONN-CIFAR), squeezenet
# (SqueezeNet 1.1), resnet50 (testdata/bench-large, git-ignored: generate it with
# `testdata/.venv/bin/python testdata/generate.py --only bench-large`), mobilenetv3
# (torchvision's MobileNetV3-small at 224×224, random weights, the legacy exporter:
# testdata/zoo-large, git-ignored: `testdata/.venv/bin/python testdata/generate.py --only
# zoo-large`), vittiny (torchvision's VisionTransformer in DeiT-Tiny's shape at 224×224,
# the same group).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

model_file() {
  case $1 in
    lenet) echo testdata/digits/digits_lenet.onnx ;;
    minionn) echo testdata/bench/minionn_cifar.onnx ;;
    squeezenet) echo testdata/bench/squeezenet.onnx ;;
    resnet50) echo testdata/bench-large/resnet50.onnx ;;
    mobilenetv3) echo testdata/zoo-large/mobilenet_v3_small_legacy_o17.onnx ;;
    vittiny) echo testdata/zoo-large/vit_tiny_16_legacy_o17.onnx ;;
    *) echo "unknown model $1 (lenet minionn squeezenet resnet50 mobilenetv3 vittiny)" >&2; return 1 ;;
  esac
}
model_input() {
  case $1 in
    lenet) echo testdata/digits/samples/digit_3.npy ;;
    *) local f; f=$(model_file "$1") && echo "${f%.onnx}.cases/0/input_0.npy" ;;
  esac
}
model_bits() { case $1 in resnet50) echo 37 ;; *) echo 32 ;; esac; }

OT=${OT:-iknp}
MODELS=("$@")
[ ${#MODELS[@]} -eq 0 ] && MODELS=("${DEFAULT_MODELS[@]}")
for m in "${MODELS[@]}"; do model_file "$m" > /dev/null; done
[ -x /usr/bin/time ] || { echo "needs /usr/bin/time (apt-get install -y time)" >&2; exit 1; }

cargo build --release -q -p sci-compiler --bin sci-compile -p sci-cli --bin sci-run
TARGET=$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')
COMPILE=$TARGET/release/sci-compile
SCIRUN=$TARGET/release/sci-run
mkdir -p "$OUT"
