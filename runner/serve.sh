#!/usr/bin/env bash
# Starts one server alone in the foreground: ./runner/serve.sh tomcat|tornado [--port N] [options]
# (--help lists them). Prints the URL once it answers; Ctrl-C stops it and everything it started.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=runner/script-options.sh
source "$here/script-options.sh"
crossbench_python_command serve crossbench.run.serve "$@"
