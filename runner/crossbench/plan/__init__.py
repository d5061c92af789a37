"""An experiment as a plan: the experiment file read and checked (experiment, experiment_schema), expanded into cells
in run order (experiment_expand), a planned cell and its point (cellplan), what is decided between cells while
planning (cell_decisions), a capacity search's table (search_spec). A layer of the runner (runner/README.md):
imports hosts/, drivers/ and the layers below."""
