#!/usr/bin/env bash
# Compares two runs point by point: B/A of each point's headline figure, rps and p99 with their 95 % intervals
# over launches and a verdict (faster, slower, same within the margin, inconclusive, cannot tell, no value), the
# headline changes held to a 5 % false discovery rate across the points: a text table on stdout, compare.html
# and a chart in --out DIR (default RUN_B/compare-<run id of A>).
# Usage: analysis/compare.sh RUN_A RUN_B [--out DIR] [--force] [--noise-floor SIGMA_RUN]
# --noise-floor overrides the run-to-run spread sigma_run (on logs) that noise_floor.toml holds for this machine.
#        analysis/compare.sh RUN --within VARIANT_A VARIANT_B [--out DIR]
# --within compares two server variants inside one run ('tomcat maxThreads=20', or a server such as tornado),
# their launches paired by round: the shuffled rounds share the machine's drift, which runs minutes apart do not.
# Exit status 2: refused (different experiments or point sets; --force compares the common points).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=analysis/analysis-cli.sh
source "$here/analysis-cli.sh"
usage="RUN_A RUN_B [--out DIR] [--force] [--noise-floor SIGMA_RUN] | RUN --within VARIANT_A VARIANT_B [--out DIR]"
crossbench_analysis compare 2 "" "$usage" "$@"
