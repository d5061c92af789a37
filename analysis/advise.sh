#!/usr/bin/env bash
# maxThreads advice for your workload. Without RUN_DIR, from the model alone (threads = rate x hold time plus
# headroom for bursts: the smallest pool full at most 0.1 % of the time under random arrivals; Erlang C for a p99
# target), printed and said to be the model's. With RUN_DIR, a maxthreads run on your machine or the committed
# reference docs/results/maxthreads/runs/maxthreads-delay (read from its points.jsonl): the pool size checked against
# where the run's knees sit, what it costs there (RSS, CPU), acceptCount and maxConnections, whether virtual threads
# remove the knee. A local run's advice goes to advice.md and advice.json in --out DIR (default
# RUN_DIR/advice-<rate>rps-<hold>ms: the run's own files are never overwritten unless --out names the run
# directory); the model's and a reference's are printed only, unless --out is given.
# With --capacity CAPACITY_RUN (a run of --experiment capacity), the capacity measured per setting goes beside the
# capacity Little's law and Erlang C predict, saying where model and measurement disagree.
# Usage: analysis/advise.sh [RUN_DIR] --rate REQ_PER_S --hold-ms MS [--p99-ms MS] [--capacity CAPACITY_RUN] [--out DIR]
#   e.g. ./analysis/advise.sh --rate 400 --hold-ms 50
#        ./analysis/advise.sh results/20261124-0500-maxthreads --rate 400 --hold-ms 50 --p99-ms 200
# Exit status 2: refused (a workload that makes no sense, a run without the maxThreads sweep, or a capacity run
# without a capacity search of Tomcat).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=analysis/analysis-cli.sh
source "$here/analysis-cli.sh"
crossbench_analysis advise 1 "" \
  "[RUN_DIR] --rate REQ_PER_S --hold-ms MS [--p99-ms MS] [--capacity CAPACITY_RUN] [--out DIR]" "$@"
