"""crossbench runner: servers, load generators, samplers, cell records."""
