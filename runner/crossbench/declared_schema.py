"""What a declared server's TOML table may say, checked: a `[server.NAME]` section of an experiment file or of a
file given with --server-file. A fault is one DeclarationError line naming the file, the key and what is wrong,
raised before anything starts. The checked table comes back normalised (the command a list, the working directory
absolute, every default filled in): that form is what a run records in its metadata and what --resume and the
analysis rebuild the server from.

A table:
    command = ["{python}", "app.py", "--port", "{port}", "--threads", "{threads}"]   # or one string, split like a shell
    workdir = "."                   # relative to the file that declares it
    env = { KEY = "value" }         # added to the runner's environment; values take placeholders too
    runtime = "python"              # "jvm", "python" or "other": what the samplers read
    pool = "http"                   # jvm only (the default there): part of the ThreadPool or Executor MBean's name
    endpoints = ["core"]            # families or paths of the suite's contract it answers
    ready = { path = "/hello", timeout_s = 30 }
    stop = { signal = "TERM", grace_s = 15 }
    processes = "workers"           # the knob that sets how many processes serve (the record's processes; else 1)
    parallel = { "/delay/sync" = "threads" }   # per endpoint, the knob that caps its requests served at once
    like = "tornado"                # a group that names no endpoint for it gives it this built-in server's
    [server.NAME.knobs]
    threads = [10, 50, 200]          # a default (the first) and the values a run sweeps by default
    spare = { default = 10, at_most = "threads" }
"""

from __future__ import annotations

import re
import shlex
import signal
import string
from pathlib import Path

from crossbench.refusal import Refusal

from . import endpoints

KEYS = {
    "command",
    "workdir",
    "env",
    "runtime",
    "pool",
    "endpoints",
    "ready",
    "stop",
    "knobs",
    "processes",
    "parallel",
    "like",
}
READY_KEYS = {"path", "timeout_s"}
STOP_KEYS = {"signal", "grace_s"}
KNOB_KEYS = {"default", "values", "at_most"}
RUNTIMES = ("jvm", "python", "other")
# What every command may use besides its knobs: where it listens and the suite's own interpreter.
BUILT_IN_PLACEHOLDERS = ("port", "host", "python")
DEFAULTS = {
    "workdir": ".",
    "env": {},
    "runtime": "other",
    "pool": "http",
    "endpoints": ["core"],
    "ready": {"path": "/hello", "timeout_s": 30.0},
    "stop": {"signal": "TERM", "grace_s": 15.0},
}
SECTION = "server"  # [server.NAME] in an experiment file or a --server-file; the run's config keeps it
NAME = re.compile(r"^[a-z][a-z0-9_]{0,39}$")  # a cell id joins its parts with -


class DeclarationError(Refusal, ValueError):
    """A declared server refused before anything starts; the message names the file and the key."""


def placeholders(text: str) -> set[str]:
    """The {name} fields of one command word or environment value ({{ and }} stay literal braces)."""
    try:
        return {field for _, field, _, _ in string.Formatter().parse(text) if field is not None}
    except ValueError as e:
        raise ValueError(f"{text!r}: {e}") from None


def refuse_taken(names, where: str, taken) -> None:
    """A declared name that is a built-in server's (`taken`) refused, naming the first."""
    clash = sorted(set(names) & set(taken))
    if clash:
        raise DeclarationError(
            f"{where}: [{SECTION}.{clash[0]}] name: {clash[0]} is a built-in server; give the "
            "declared one a name of its own"
        )


def check(name: str, table: object, where: str, base_dir: Path | None, check_paths: bool = True) -> dict:
    """The declaration of server `name` checked and normalised; `where` names its file in messages, `base_dir`
    is what a relative workdir is relative to (None: a recorded declaration, its workdir already absolute).
    check_paths=False: a recorded run read where its paths need not exist (the analysis of a copied run)."""

    def fail(key: str, message: str):
        raise DeclarationError(f"{where}: [server.{name}] {key}: {message}")

    if not NAME.match(name):
        fail("name", "a server's name is lower-case letters, digits and _ (up to 40, a letter first)")
    if not isinstance(table, dict):
        fail("name", f"a declared server is a table of keys, not {table!r}")
    unknown = set(table) - KEYS
    if unknown:
        fail(sorted(unknown)[0], f"unknown key; allowed: {', '.join(sorted(KEYS))}")
    if "command" not in table:
        fail("command", "missing: the command that starts the server in the foreground")
    knobs = check_knobs(table.get("knobs", {}), fail)
    command = check_command(table["command"], fail)
    env = check_env(table.get("env", DEFAULTS["env"]), fail)
    check_placeholders(command, env, knobs, fail)
    workdir = table.get("workdir", DEFAULTS["workdir"])
    served = check_endpoints(table.get("endpoints", DEFAULTS["endpoints"]), fail)
    pool = check_pool(table, fail)
    return {
        **({"pool": pool} if pool is not None else {}),  # a JVM's alone
        "command": command,
        "workdir": check_workdir(workdir, base_dir, fail) if check_paths else workdir,
        "env": env,
        "runtime": check_runtime(table.get("runtime", DEFAULTS["runtime"]), fail),
        "endpoints": served,
        "ready": check_ready(table.get("ready", {}), fail),
        "stop": check_stop(table.get("stop", {}), fail),
        "knobs": knobs,
        "processes": check_knob_name(table.get("processes"), knobs, "processes", fail),
        "parallel": check_parallel(table.get("parallel", {}), knobs, served, fail),
        "like": check_like(table.get("like"), fail),
    }


def check_command(command: object, fail) -> list[str]:
    if isinstance(command, str):
        try:
            command = shlex.split(command)
        except ValueError as e:
            fail("command", f"cannot be split into words ({e})")
    if not isinstance(command, list) or not command or not all(isinstance(w, str) and w for w in command):
        fail("command", f"a non-empty list of words (or one string split like a shell's), not {command!r}")
    return command


def check_env(env: object, fail) -> dict:
    if not isinstance(env, dict) or not all(isinstance(v, (str, int)) for v in env.values()):
        fail("env", f"a table of NAME = \"value\", not {env!r}")
    return {str(k): str(v) for k, v in env.items()}


def check_placeholders(command: list[str], env: dict, knobs: dict, fail) -> None:
    """Every placeholder is a knob or a built-in one; every knob is used (a knob the command never reads would
    be swept without changing anything)."""
    used = set()
    for key, texts in (("command", command), ("env", env.values())):
        for text in texts:
            try:
                found = placeholders(text)
            except ValueError as e:
                fail(key, f"a placeholder is malformed in {e}")
            missing = sorted(found - set(knobs) - set(BUILT_IN_PLACEHOLDERS))
            if missing:
                fail(
                    key,
                    f"placeholder {{{missing[0]}}} is neither a knob (knobs: "
                    f"{', '.join(sorted(knobs)) or 'none'}) nor one of "
                    f"{', '.join('{' + p + '}' for p in BUILT_IN_PLACEHOLDERS)}",
                )
            used |= found
    if "port" not in used:
        fail("command", "never uses {port}: the suite picks the port each start listens on")
    unused = sorted(set(knobs) - used)
    if unused:
        fail(f"knobs.{unused[0]}", "the command never uses it (no {" + unused[0] + "} in command or env)")


def check_workdir(workdir: object, base_dir: Path | None, fail) -> str:
    if not isinstance(workdir, str) or not workdir:
        fail("workdir", f"a directory path, not {workdir!r}")
    path = Path(workdir)
    if not path.is_absolute():
        if base_dir is None:
            fail("workdir", f"{workdir!r} is relative where only an absolute path can be read")
        path = base_dir / path
    if not path.is_dir():
        fail("workdir", f"{path} does not exist or is not a directory")
    return str(path.resolve())


def check_runtime(runtime: object, fail) -> str:
    if runtime not in RUNTIMES:
        fail("runtime", f"one of {', '.join(RUNTIMES)}, not {runtime!r}")
    return runtime


def check_pool(table: dict, fail) -> str | None:
    """The name part the JVM probe matches among Tomcat's ThreadPool and Executor MBeans: a JVM's alone (None for
    other runtimes)."""
    pool = table.get("pool")
    if table.get("runtime", DEFAULTS["runtime"]) != "jvm":
        if pool is not None:
            fail("pool", 'read by the JVM probe: declare runtime = "jvm" with it')
        return None
    pool = DEFAULTS["pool"] if pool is None else pool
    if not isinstance(pool, str) or not pool:
        fail("pool", f"part of a pool MBean's name (e.g. \"http\" for http-nio-8080), not {pool!r}")
    return pool


def check_endpoints(given: object, fail) -> list[str]:
    """Families ("core", "tfb", "db") and paths of the suite's contract, as the paths they name."""
    if isinstance(given, str):
        given = [given]
    if not isinstance(given, list) or not given:
        fail("endpoints", f"a list of families or paths of the contract, not {given!r}")
    families = {e.family for e in endpoints.TABLE}
    paths = []
    for one in given:
        if one in families:
            paths += endpoints.family(one)
        elif one in endpoints.BY_PATH:
            paths.append(one)
        else:
            fail(
                "endpoints",
                f"{one!r} is neither a family ({', '.join(sorted(families))}) nor an endpoint "
                f"({', '.join(endpoints.BY_PATH)})",
            )
    return sorted(set(paths))


def check_knob_name(name: object, knobs: dict, key: str, fail) -> str | None:
    """A key whose value names an integer knob (None: not given)."""
    integers = [n for n, k in knobs.items() if isinstance(k["default"], int)]
    if name is not None and name not in integers:
        fail(key, f"names an integer knob ({', '.join(integers) or 'none declared'}), not {name!r}")
    return name


def check_parallel(parallel: object, knobs: dict, served: list[str], fail) -> dict:
    """endpoint -> the knob that caps how many of its requests are served at once (the knee's prediction)."""
    if not isinstance(parallel, dict):
        fail("parallel", f"a table of \"endpoint\" = \"knob\", not {parallel!r}")
    for path, name in parallel.items():
        if path not in served:
            fail(f"parallel.{path}", f"not one of the endpoints it declares ({', '.join(served)})")
        check_knob_name(name, knobs, f"parallel.{path}", fail)
    return dict(parallel)


def check_like(like: object, fail) -> str | None:
    """A built-in server's name (declared.normalised checks it is one), or None."""
    if like is not None and not isinstance(like, str):
        fail("like", f"a built-in server's name, not {like!r}")
    return like


def check_ready(ready: object, fail) -> dict:
    if not isinstance(ready, dict) or set(ready) - READY_KEYS:
        fail("ready", f"a table of {', '.join(sorted(READY_KEYS))}, not {ready!r}")
    path = ready.get("path", DEFAULTS["ready"]["path"])
    if not isinstance(path, str) or not path.startswith("/"):
        fail("ready.path", f"a URL path starting with /, not {path!r}")
    return {"path": path, "timeout_s": seconds(ready, "timeout_s", DEFAULTS["ready"]["timeout_s"], "ready", fail)}


def check_stop(stop: object, fail) -> dict:
    if not isinstance(stop, dict) or set(stop) - STOP_KEYS:
        fail("stop", f"a table of {', '.join(sorted(STOP_KEYS))}, not {stop!r}")
    name = stop.get("signal", DEFAULTS["stop"]["signal"])
    if not isinstance(name, str) or not isinstance(
        getattr(signal, "SIG" + name.upper().removeprefix("SIG"), None), signal.Signals
    ):
        fail("stop.signal", f"a signal's name (TERM, INT, QUIT, ...), not {name!r}")
    return {
        "signal": name.upper().removeprefix("SIG"),
        "grace_s": seconds(stop, "grace_s", DEFAULTS["stop"]["grace_s"], "stop", fail),
    }


def seconds(table: dict, key: str, default: float, section: str, fail) -> float:
    value = table.get(key, default)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
        fail(f"{section}.{key}", f"a positive number of seconds, not {value!r}")
    return float(value)


def check_knobs(knobs: object, fail) -> dict:
    """name -> {"default", "values" (the sweep a run makes unless its experiment says otherwise), "at_most"}."""
    if not isinstance(knobs, dict):
        fail("knobs", f"a table of name = value, not {knobs!r}")
    checked = {}
    for name, given in knobs.items():
        if not re.match(r"^[a-z][a-z0-9_]*$", name) or name in BUILT_IN_PLACEHOLDERS:
            fail(
                f"knobs.{name}",
                f"a knob's name is lower-case letters, digits and _, and not {', '.join(BUILT_IN_PLACEHOLDERS)}",
            )
        table = (
            given if isinstance(given, dict) else {"values": given} if isinstance(given, list) else {"default": given}
        )
        unknown = set(table) - KNOB_KEYS
        if unknown:
            fail(f"knobs.{name}", f"unknown key {sorted(unknown)[0]}; allowed: {', '.join(sorted(KNOB_KEYS))}")
        values = table.get("values", [table["default"]] if "default" in table else [])
        if not isinstance(values, list) or not values:
            fail(f"knobs.{name}", "needs a default or a non-empty list of values")
        for value in values:
            if isinstance(value, bool) or not (isinstance(value, str) or isinstance(value, int) and value >= 1):
                fail(f"knobs.{name}", f"a value is a positive integer or a string, not {value!r}")
        if len({type(v) for v in values}) > 1:
            fail(f"knobs.{name}", "its values are all integers or all strings")
        default = table.get("default", values[0])
        if default not in values:
            fail(f"knobs.{name}", f"its default {default!r} is not one of its values {values}")
        checked[name] = {"default": default, "values": values, "at_most": table.get("at_most")}
    for name, knob in checked.items():
        bound = knob["at_most"]
        if bound is not None and (bound not in checked or bound == name):
            fail(
                f"knobs.{name}.at_most",
                f"names another knob ({', '.join(sorted(set(checked) - {name}))}), not {bound!r}",
            )
        if bound is not None and not all(isinstance(v, int) for v in [*knob["values"], *checked[bound]["values"]]):
            fail(f"knobs.{name}.at_most", "a bound compares integer knobs")
    check_bounds(checked, {n: k["values"] for n, k in checked.items()}, fail)
    return checked


def check_bounds(knobs: dict, values: dict, fail) -> None:
    """Each bounded knob's values at most its bound's smallest value: every pair a sweep could make holds."""
    for name, knob in knobs.items():
        bound = knob["at_most"]
        if bound is None:
            continue
        most, least = max(values[name]), min(values[bound])
        if most > least:
            fail(f"knobs.{name}", f"{most} is above {bound} = {least} (at_most = \"{bound}\")")
