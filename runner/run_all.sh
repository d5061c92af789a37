#!/usr/bin/env bash
# The suite's main job: ./runner/run_all.sh [--quick | --experiment NAME] [overrides...]  (--help lists them)
# Checks the tools (installing missing Debian packages when root), starts building a pinned generator the plan
# needs (oha) and prepares the Python environment meanwhile, lifts the open-file limit, then hands over to the runner (crossbench.run), which plans, measures and
# draws the charts into results/<run-id>/. --help, --version and --dry-run (the plan and what is missing, with
# the command that installs each) install, build and write nothing.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"

# shellcheck source=runner/prerequisites.sh
source "$here/prerequisites.sh"
# shellcheck source=runner/script-options.sh
source "$here/script-options.sh"

if crossbench_answers_alone "$@"; then
  status=0
  crossbench_from_source run_all crossbench.run "$@" || status=$?
  case " $* " in
    *" --help "* | *" -h "* | *" --version "*) ;;
    *) if ((status == 0)); then
         crossbench_say_missing run_all
         # shellcheck source=runner/python-env.sh
         source "$here/python-env.sh" --check run_all
       fi ;;
  esac
  exit "$status"
fi

crossbench_install_missing run_all

# stop_tree PID: stops the process and every process under it (a build: its compilers too), all of them listed
# before any is stopped so that none starts another unseen
stop_tree() {
  local tree=("$1") i=0 child
  while ((i < ${#tree[@]})); do
    for child in $(pgrep -P "${tree[i]}" 2>/dev/null); do tree+=("$child"); done
    i=$((i + 1))
  done
  kill "${tree[@]}" 2>/dev/null || true
}

# The pinned generators the plan needs and the tools cache lacks (oha for held windows) are built at once, in the
# background, while the Python environment is made; the runner waits for that build before its first cell.
mapfile -t unbuilt < <(crossbench_from_source run_all crossbench.run.unbuilt "$@" 2>/dev/null || true)
if ((${#unbuilt[@]})); then
  "$here/install-openloop.sh" "${unbuilt[@]}" </dev/null &
  building=$!
  trap 'stop_tree "$building"' EXIT    # the environment could not be made: no build left behind
fi

# shellcheck source=runner/python-env.sh
source "$here/python-env.sh"
trap - EXIT

# Many connections need many descriptors: take the hard limit; the runner refuses if that is still short.
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true

exec "$PYTHON" -m crossbench.run "$@"
