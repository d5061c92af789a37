"""runner/README.md's "The road of a cell's concurrency" matches the code: every module a step names exists, and every
name it quotes in backticks (a function, a class, a field) is in one of the modules that step names. Renaming or
moving a room without mending the map fails here."""

from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
README = REPO / "runner" / "README.md"
HEADING = "## The road of a cell's concurrency"
# where a module named by its folder in the map lives: the runner's package, then the analysis's
ROOTS = (REPO / "runner" / "crossbench", REPO / "analysis" / "crossbench_analysis")
NOT_CODE = (".json", ".jsonl", "/")  # files a run writes, and folders


def road_steps(text: str) -> list[str]:
    """The numbered steps of the road's section, each as one string."""
    section = text.split(HEADING, 1)[1].split("\n## ", 1)[0]
    return [step.strip() for step in re.split(r"\n(?=\d+\. )", section) if re.match(r"\d+\. ", step.strip())]


def module_of(name: str) -> Path | None:
    return next((root / name for root in ROOTS if (root / name).is_file()), None)


def problems(step: str) -> list[str]:
    """What a step says that the code does not hold: a module that is not there, a quoted name in none of its
    modules."""
    quoted = re.findall(r"`([^`]+)`", step)
    named = [q for q in quoted if q.endswith(".py")]
    found = [module_of(name) for name in named]
    wrong = [f"no module {name}" for name, path in zip(named, found) if path is None]
    sources = " ".join(path.read_text() for path in found if path)
    for token in quoted:
        if token.endswith(".py") or token.endswith(NOT_CODE) or not re.match(r"[A-Za-z_]", token):
            continue
        for word in re.findall(r"[A-Za-z_][A-Za-z0-9_]*", token.split("(")[0]):
            if word != "crossbench_analysis" and not re.search(rf"\b{word}\b", sources):
                wrong.append(f"`{token}`: {word} is in none of {', '.join(named) or 'no module'}")
    return wrong


def test_the_road_has_its_steps_from_the_command_line_to_a_finding():
    steps = road_steps(README.read_text())
    assert len(steps) >= 8
    assert "run/run_args.py" in steps[0] and "findings/" in steps[-1]


def test_every_room_on_the_road_is_in_the_code():
    found = [f"step {i}: {p}" for i, step in enumerate(road_steps(README.read_text()), 1) for p in problems(step)]
    assert not found, "runner/README.md's road does not match the code:\n" + "\n".join(found)


def test_the_check_sees_a_room_that_is_not_there():
    assert problems("1. **Plan** (`plan/experiment_expand.py`): `expand` then `no_such_function`.") == [
        "`no_such_function`: no_such_function is in none of plan/experiment_expand.py"
    ]
    assert problems("2. (`plan/gone.py`)") == ["no module plan/gone.py"]
