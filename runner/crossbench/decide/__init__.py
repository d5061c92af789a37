"""What the run decides from what it has measured: between cells, a worker sweep's stop and an auto-rate cell's rate
(between_cells); after the plan, launches decided from the records, each resumable because it reads only records:
disturbed launches again (disturbed), the precision target's rounds (precision), capacity searches (capacity),
TechEmpower's best levels (best_levels), failed points again (retry), service-level targets (slo). A layer of the
runner (runner/README.md): imports figures/, plan/ and the layers below; never a cell or the run."""
