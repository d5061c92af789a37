"""The top floor: run_all.sh's command line (run_args), the checks before the first cell (run_checks), the hosts a
run opens (open_placement), the loop over cells (run_loop), progress, what produced the run (metadata), the run
itself (run) and serve.sh's one server (serve). Imports every layer and the analysis package; nothing imports it."""
