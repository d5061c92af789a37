#!/usr/bin/env bash
# Draws the charts (gnuplot, PNG and SVG) and writes report.html for one run directory.
# Usage: analysis/analyze.sh RUN_DIR      (e.g. ./analysis/analyze.sh results/20261122-0130-seed002)
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=analysis/analysis-cli.sh
source "$here/analysis-cli.sh"
crossbench_analysis analyze 1 "1" "RUN_DIR" "$@"
