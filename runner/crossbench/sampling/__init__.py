"""Samplers: the server process tree over time, and the JVM probe (connector pool, GC)."""

from .jvm_probe import SERIAL_GC_NAMES, JvmProbe, JvmProbeError, PoolReading
from .process_tree import ProcessTreeSampler, Sample, csv_header, read_samples_csv, summarize

__all__ = [
    "ProcessTreeSampler",
    "Sample",
    "csv_header",
    "read_samples_csv",
    "summarize",
    "JvmProbe",
    "JvmProbeError",
    "PoolReading",
    "SERIAL_GC_NAMES",
]
