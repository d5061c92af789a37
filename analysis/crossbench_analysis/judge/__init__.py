"""Decisions taken from a run's figures, each in one place: a sweep's best step and ties (decisions), the hinge fit
and the knee rule (hinge, knee_rule, knees), the queueing arithmetic of a workload (workload), capacity searches
as analysis reads them and the models beside them (capacity_marks, capacity_models). May import read/ only."""
