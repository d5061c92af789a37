#!/usr/bin/env bash
# What analyze.sh, compare.sh and advise.sh share (sourced, not run): the usage check, the project's Python,
# and the one command of `python -m crossbench_analysis` they stand for.

# crossbench_analysis COMMAND LEAST MOST USAGE ARG...: refuses fewer than LEAST or more than MOST arguments
# (MOST empty: no limit) with the usage line and exit status 2; else runs the command with the arguments.
# -h, --help and --version go to the command as they are: its help (every option) or the version, exit status 0.
crossbench_analysis() {
  local command=$1 least=$2 most=$3 usage=$4 arg asks=false
  shift 4
  for arg in "$@"; do
    [[ "$arg" == -h || "$arg" == --help || "$arg" == --version ]] && asks=true
  done
  if ! $asks && { (($# < least)) || { [[ -n "$most" ]] && (($# > most)); }; }; then
    echo "usage: $0 $usage" >&2
    exit 2
  fi
  local here
  here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
  # shellcheck source=runner/script-options.sh
  source "$here/../runner/script-options.sh"
  if $asks; then      # --help and --version: nothing prepared
    crossbench_from_source "$(basename "$0" .sh)" crossbench_analysis "$command" "$@"
    exit
  fi
  # shellcheck source=runner/python-env.sh
  source "$here/../runner/python-env.sh"
  exec "$PYTHON" -m crossbench_analysis "$command" "$@"      # installed in the venv (analysis/pyproject.toml)
}
