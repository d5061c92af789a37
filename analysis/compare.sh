#!/usr/bin/env bash
# Compares two runs cell by cell (rps and p99, B over A; beyond noise or not): a text table on stdout,
# compare.html and a chart in --out DIR (default RUN_B/compare-<run id of A>).
# Usage: analysis/compare.sh RUN_A RUN_B [--out DIR] [--force]
# Exit status 2: refused (different experiments or cell sets; --force compares the common cells).
set -euo pipefail

if (($# < 2)); then
  echo "usage: $0 RUN_A RUN_B [--out DIR] [--force]" >&2
  exit 2
fi
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=runner/python-env.sh
source "$here/../runner/python-env.sh"

PYTHONPATH="$here${PYTHONPATH:+:$PYTHONPATH}" exec "$PYTHON" -m crossbench_analysis compare "$@"
