"""maxThreads advice for a workload: what the run measured (advice_run), the capacity beside the model
(advice_capacity), the advice (advice) and its words (advice_text). May import read/, judge/ and charts/ (the
maxthreads family's cells)."""
