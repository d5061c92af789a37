"""Launches decided from the records after the plan, each resumable because it reads only records: the precision
target's rounds (precision), capacity searches (capacity), TechEmpower's best levels (best_levels), failed points
again (retry), service-level targets (slo). A layer of the runner (runner/README.md): imports figures/, plan/ and
the layers below; never a cell or the run."""
