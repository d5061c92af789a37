#!/usr/bin/env bash
# Starts one server alone in the foreground: ./runner/serve.sh tomcat|tornado [--port N] [options]
# (--help lists them). Prints the URL once it answers; Ctrl-C stops it and everything it started.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=runner/script-options.sh
source "$here/script-options.sh"
if crossbench_answers_alone "$@"; then      # --help and --version: nothing prepared
  crossbench_from_source serve crossbench.run.serve "$@"
  exit
fi
# shellcheck source=runner/python-env.sh
source "$here/python-env.sh"
exec "$PYTHON" -m crossbench.run.serve "$@"
