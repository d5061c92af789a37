"""Runs tornado-app/server.py with every garbage collection logged: start (epoch s), pause (s), generation,
objects collected; GC_OFF=1 in the environment turns the collector off."""

import gc
import os
import runpy
import sys
import time

log = open(sys.argv[1], "w", buffering=1)
started = {}


def note(phase, info):
    if phase == "start":
        started["t"] = time.time()
    else:
        log.write(f"{started['t']:.4f} {time.time() - started['t']:.5f} {info['generation']} {info['collected']}\n")


gc.callbacks.append(note)
if os.environ.get("GC_OFF"):
    gc.disable()  # the control: no collection at all
script = sys.argv[2]
sys.argv = [script] + sys.argv[3:]
sys.path.insert(0, os.path.dirname(script))
runpy.run_path(script, run_name="__main__")
