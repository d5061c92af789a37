"""The findings: one finding (finding), a run's findings (findings) by family (findings_*), TechEmpower's published
figures beside ours (tfb_reference). May import read/, judge/ and charts/ (a family's kinds and labels)."""
