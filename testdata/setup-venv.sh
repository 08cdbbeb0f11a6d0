#!/bin/sh
# Create testdata/.venv with the pinned generator dependencies, or with
# `keras`, testdata/.venv-keras with those of the keras group.
set -eu
cd "$(dirname "$0")"
case "${1:-}" in
    keras) venv=.venv-keras; req=requirements-keras.txt ;;
    "") venv=.venv; req=requirements.txt ;;
    *) echo "usage: $0 [keras]" >&2; exit 2 ;;
esac
python3.11 -m venv "$venv" 2>/dev/null || python3 -m venv "$venv"
"$venv/bin/pip" install --upgrade pip
"$venv/bin/pip" install -r "$req"
