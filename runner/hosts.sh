#!/usr/bin/env bash
# Hosts for run_all.sh --hosts FILE (README, "Running on several machines"):
#   ./runner/hosts.sh setup --hosts FILE   this checkout, as built here, copied to each host's project_dir, then the
#                                          project's own setup there over SSH (Debian packages, Python environment)
#   ./runner/hosts.sh check --hosts FILE   the run's preflight alone: reachable, tools, clock offset, RTT
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=runner/script-options.sh
source "$here/script-options.sh"
crossbench_python_command hosts crossbench.hosts.setup "$@"
