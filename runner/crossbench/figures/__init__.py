"""Figures with their error: a point's figures over its launches (points, points.jsonl) and compare's tests of a
change (changes). A layer of the runner (runner/README.md): imports plan/, hosts/ and the layers below, never a
cell or the run."""
