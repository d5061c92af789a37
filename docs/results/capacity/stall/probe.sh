#!/usr/bin/env bash
# One launch of the 2026-11-25 capacity pattern against Tornado with its garbage collections logged: Tornado on
# core 1, a 1 s warm-up oha, then a fresh 4 s oha at RATE req/s with -c CONNECTIONS (each of its tasks opens a
# connection at its first tick and keeps it), every request recorded in OUT/oha.sqlite.
#   docs/results/capacity/stall/probe.sh RATE CONNECTIONS OUT      (GC_OFF=1: the collector off)
set -euo pipefail
rate=$1; connections=$2; out=$3
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../../../.." && pwd)
oha=${OHA:-$HOME/.cache/crossbench/tools/oha-1.16.0/bin/oha}
port=18999
mkdir -p "$out"
taskset -c 1 "$repo/.venv/bin/python" "$here/gc_logged_server.py" "$out/gc.log" "$repo/tornado-app/server.py" \
    --port "$port" --backlog 1024 > "$out/server.log" 2>&1 &
server=$!
trap 'kill "$server"' EXIT
for _ in $(seq 50); do
    curl -sf -o /dev/null "http://127.0.0.1:$port/delay/async?ms=1" && break
    sleep 0.2
done
taskset -c 0 "$oha" --no-tui -z 1000ms -q "$rate" --latency-correction -w -c "$connections" --worker-threads 1 \
    "http://127.0.0.1:$port/delay/async?ms=10" > /dev/null
date +%s.%N > "$out/launched"
taskset -c 0 "$oha" --no-tui --output-format json -o "$out/oha.json" --db-url "$out/oha.sqlite" -z 4000ms \
    -q "$rate" --latency-correction -w -c "$connections" -t 11300ms --worker-threads 1 \
    "http://127.0.0.1:$port/delay/async?ms=200"
