#!/usr/bin/env bash
# Sourced by the runner's scripts: makes sure the project's virtual environment exists and is current,
# then sets PYTHON to its interpreter. Creates it on first use (needs python3 with venv and network to PyPI).
# Sourced with --check CALLER (run_all.sh --dry-run) it makes nothing: it says what is missing and the command.
set -euo pipefail

CROSSBENCH_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="${CROSSBENCH_VENV:-$CROSSBENCH_ROOT/.venv}"
PYTHON="$VENV/bin/python"
stamp="$VENV/.crossbench-requirements"
# Every Python server's pinned requirements (each app folder's requirements.txt), the contract the apps share
# (python-contract/, a package like any other), the analysis (analysis/, one too) and the runner's own.
requirements=("$CROSSBENCH_ROOT"/*-app/requirements.txt)
wanted="$(cat "$CROSSBENCH_ROOT/runner/pyproject.toml" "$CROSSBENCH_ROOT/python-contract/pyproject.toml" \
  "$CROSSBENCH_ROOT/analysis/pyproject.toml" "${requirements[@]}" | sha256sum)"

if [[ "${1:-}" == --check ]]; then
  if [[ ! -x "$PYTHON" ]]; then
    echo "${2:-crossbench}: missing: the Python environment ($VENV): the run makes it first (a minute or two, from" \
      "PyPI), or now: bash runner/python-env.sh" >&2
  elif [[ "$(cat "$stamp" 2>/dev/null)" != "$wanted" ]]; then
    echo "${2:-crossbench}: missing: the Python environment ($VENV) is older than the project's pins: the run" \
      "brings it up to date first, or now: bash runner/python-env.sh" >&2
  fi
  return 0
fi

if [[ ! -x "$PYTHON" ]] || [[ "$(cat "$stamp" 2>/dev/null)" != "$wanted" ]]; then
  echo "crossbench: preparing the Python environment in $VENV" >&2
  if ! python3 -m venv "$VENV"; then
    echo "crossbench: python3 -m venv failed; on Debian/Ubuntu: apt-get install python3-venv" >&2
    exit 2
  fi
  if ! "$PYTHON" -m pip install --quiet "${requirements[@]/#/--requirement=}" \
      -e "$CROSSBENCH_ROOT/python-contract" -e "$CROSSBENCH_ROOT/analysis" -e "$CROSSBENCH_ROOT/runner[test]" \
      > "$VENV/pip-install.log" 2>&1; then
    cat "$VENV/pip-install.log" >&2
    echo "crossbench: installing the Python packages failed (log above)" >&2
    exit 2
  fi
  echo "$wanted" > "$stamp"
fi
export PYTHON CROSSBENCH_ROOT
