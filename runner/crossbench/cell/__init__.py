"""One cell, measured: its lifecycle (cell), the checks that fail it (cell_checks), what it needs from the run
(cell_context), its record (cell_record), every record field (fields) and faults of the environment (faults). A
layer of the runner (runner/README.md): imports decide/ and every layer below; never the run."""
