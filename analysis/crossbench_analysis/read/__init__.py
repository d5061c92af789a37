"""Reading a run: its directory (runinfo: metadata.json, cells.jsonl, samples.csv) and a record's server setting and
a point in words (setting). The bottom layer: imports only the runner's package."""
