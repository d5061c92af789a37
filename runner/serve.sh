#!/usr/bin/env bash
# Starts one server alone in the foreground: ./runner/serve.sh tomcat|tornado [--port N] [options]
# (--help lists them). Prints the URL once it answers; Ctrl-C stops it and everything it started.
set -euo pipefail
# shellcheck source=runner/python-env.sh
source "$(dirname "${BASH_SOURCE[0]}")/python-env.sh"
exec "$PYTHON" -m crossbench.run.serve "$@"
