"""An experiment as a plan: the experiment file read and checked (experiment, experiment_schema), expanded into cells
in run order (experiment_expand), a planned cell and its point (cellplan), a capacity search's table (search_spec).
What the run decides between cells is decide/between_cells.py. A layer of the runner (runner/README.md):
imports hosts/, drivers/ and the layers below."""
