#!/usr/bin/env bash
# The whole test suite, exactly what CI runs after `cargo fmt --check` and `cargo clippy
# -D warnings` (.ci/run) and what the README's test command runs. Every step's failure
# stops the script with its status (set -e; one command per line, no `&&` chains whose
# left side would escape -e):
#   1. the Rust workspace's tests;
#   2. the protocol suite again on the silent (Ferret) OT engine (bytes and rounds are
#      pinned on the IKNP run; see runtime/src/proto/testutil.rs);
#   3. the Python package (python/): built into a fresh virtual environment
#      (target/py-venv, with python/requirements-dev.txt's pinned maturin, numpy and
#      pytest) and its pytest suite, which compares against target/release/sci-compile
#      (built by step 1).
set -euo pipefail
cd "$(dirname "$0")/.."
cargo test --workspace --release
SCI_TEST_OT=silent cargo test --release -p sci-runtime --lib proto::
venv=target/py-venv
rm -rf "$venv"
python3 -m venv "$venv"
# The build backend (maturin) runs from the environment's bin/.
export VIRTUAL_ENV="$PWD/$venv" PATH="$PWD/$venv/bin:$PATH"
"$venv/bin/python" -m pip install --quiet -r python/requirements-dev.txt
"$venv/bin/python" -m pip install --quiet --no-build-isolation ./python
"$venv/bin/python" -m pytest -q -rs python/tests
