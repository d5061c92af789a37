#!/usr/bin/env bash
# Our TechEmpower figures beside TechEmpower's published ones: per test type, the ratio between every two stacks at
# their best levels (with its 95 % interval) against the same ratio in each reference run
# (analysis/reference/techempower/), and a verdict; printed and written to RUN_DIR/tfb-reference.md and .json.
# Usage: analysis/tfb_reference.sh RUN_DIR     (a run of --experiment tfb or tfb-quick)
# Exit status 2: the run has no cells of TechEmpower's types.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=analysis/analysis-cli.sh
source "$here/analysis-cli.sh"
crossbench_analysis tfb-reference 1 1 "RUN_DIR" "$@"
