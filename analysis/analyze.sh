#!/usr/bin/env bash
# Draws the charts (gnuplot, PNG and SVG) and writes report.html for one run directory.
# Usage: analysis/analyze.sh RUN_DIR      (e.g. ./analysis/analyze.sh results/20261122-0130-seed002)
set -euo pipefail

if (($# != 1)); then
  echo "usage: $0 RUN_DIR" >&2
  exit 2
fi
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=runner/python-env.sh
source "$here/../runner/python-env.sh"

PYTHONPATH="$here${PYTHONPATH:+:$PYTHONPATH}" exec "$PYTHON" -m crossbench_analysis analyze "$1"
