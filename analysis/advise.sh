#!/usr/bin/env bash
# maxThreads advice for your workload from a maxthreads run on this machine: the pool size and why, what it
# costs here (RSS, CPU), acceptCount and maxConnections, whether virtual threads remove the knee; printed and
# written to advice.md and advice.json in --out DIR (default RUN_DIR/advice-<rate>rps-<hold>ms: the run's own
# files are never overwritten unless --out names the run directory).
# With --capacity CAPACITY_RUN (a run of --experiment capacity), the capacity measured per setting goes beside the
# capacity Little's law and Erlang C predict, saying where model and measurement disagree.
# Usage: analysis/advise.sh RUN_DIR --rate REQ_PER_S --hold-ms MS [--p99-ms MS] [--capacity CAPACITY_RUN] [--out DIR]
#   e.g. ./analysis/advise.sh results/20261124-0500-maxthreads --rate 400 --hold-ms 50 --p99-ms 200
# Exit status 2: refused (a workload that makes no sense, a run without the maxThreads sweep, or a capacity run
# without a capacity search of Tomcat).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=analysis/analysis-cli.sh
source "$here/analysis-cli.sh"
crossbench_analysis advise 1 "" \
  "RUN_DIR --rate REQ_PER_S --hold-ms MS [--p99-ms MS] [--capacity CAPACITY_RUN] [--out DIR]" "$@"
