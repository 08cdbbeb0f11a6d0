#!/bin/sh
# Create testdata/.venv with the pinned generator dependencies.
set -eu
cd "$(dirname "$0")"
python3.11 -m venv .venv 2>/dev/null || python3 -m venv .venv
.venv/bin/pip install --upgrade pip
.venv/bin/pip install -r requirements.txt
