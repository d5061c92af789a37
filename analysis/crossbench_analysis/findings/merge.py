"""Findings that state the same fact once per delay, merged into one sentence that lists the values.

A sweep's findings name it 'tomcat maxThreads=200 (/delay/sync, 1 s)'. Findings of one family whose sentences are
the same but for that delay and their numbers (a figure with its interval counts as one number) become one: its
name lists the delays, '(/delay/sync, 1 / 3 / 10 s)', and each number that differs lists its values in that
order, '4.989 [4.975, 5.002] / 4.97 [4.90, 5.04] / 5.00 [4.90, 5.11]'; where no number differs the name says
'each of 1, 3 and 10 s'. The fold keeps each delay's own figure, method and detail, and the cells of all of them.
Works on findings.json's records, so a committed run's findings can be merged again without its raw records."""

from __future__ import annotations

import re

DELAY = re.compile(r"\((/[^,()]+), (\d+(?:\.\d+)? (?:s|ms))\)")
# A number and its interval, not a setting's value ('maxThreads=200' names a sweep; 'C=1000' is a number)
NUMBER = re.compile(r"(?<![A-Za-z][A-Za-z]=)(?<![\w.])\d[\d,]*(?:\.\d+)?(?: \[[^\]]*\])?")
PLACE = "\0"


def merged(records: list[dict]) -> list[dict]:
    """The records with each set of per-delay repeats replaced by one record, where the first of them stood."""
    groups: dict[tuple, list[int]] = {}
    for i, r in enumerate(records):
        found = shape(r["sentence"])
        if found:
            groups.setdefault((r.get("family"), r.get("chart"), found[0]), []).append(i)
    out, done = [], set()
    for i, r in enumerate(records):
        if i in done:
            continue
        members = next((m for m in groups.values() if m[0] == i), [i])
        delays = [shape(records[j]["sentence"])[1] for j in members] if len(members) > 1 else []
        if len(set(delays)) < max(2, len(members)):
            out.append(r)
            continue
        done.update(members)
        out.append(joined([records[j] for j in members]))
    return out


def shape(sentence: str) -> tuple[str, str, list[str]] | None:
    """(the sentence with its delay and numbers taken out, the delay, the numbers), or None for a sentence that
    names no single sweep's delay."""
    names = DELAY.findall(sentence)
    if len(names) != 1:
        return None
    endpoint, delay = names[0]
    bare = DELAY.sub(f"({endpoint}, {PLACE}D)", sentence)
    return NUMBER.sub(PLACE, bare), delay, NUMBER.findall(bare)


def joined(members: list[dict]) -> dict:
    """One record for per-delay records of the same shape, delays in the order of their length."""
    members = sorted(members, key=lambda r: seconds(shape(r["sentence"])[1]))
    shapes = [shape(r["sentence"]) for r in members]
    template, delays = shapes[0][0], [s[1] for s in shapes]
    columns = list(zip(*(s[2] for s in shapes)))
    varies = any(len(set(values)) > 1 for values in columns)
    numbers = iter(" / ".join(values) if len(set(values)) > 1 else values[0] for values in columns)
    sentence = re.sub(PLACE + "(?!D)", lambda _: next(numbers), template)
    sentence = sentence.replace(PLACE + "D", delay_list(delays, varies))
    folds = [f"at {d}: " + "; ".join(part for part in (fold_of(r),) if part) for d, r in zip(delays, members)]
    first = members[0]
    return {
        **first,
        "sentence": sentence,
        "label": "",
        "figure": None,
        "interval": None,
        "n": None,
        "launches": None,
        "method": "",
        "basis": "",
        "figure_text": "",
        "leads": True,
        "detail": " | ".join(folds),
        "cells": [c for r in members for c in r.get("cells") or []],
        "left_out": [x for r in members for x in r.get("left_out") or []],
    }


def fold_of(record: dict) -> str:
    parts = (
        [record["figure_text"] + (f", {record['method']}" if record.get("method") else "")]
        if record.get("figure_text")
        else []
    )
    return "; ".join(parts + ([record["detail"].lstrip("; ")] if record.get("detail") else []))


def delay_list(delays: list[str], varies: bool) -> str:
    """'1 / 3 / 10 s' (values listed in this order follow it) or 'each of 1, 3 and 10 s'; the unit said once when
    they share it."""
    units = {d.split()[1] for d in delays}
    said = [d.split()[0] for d in delays] if len(units) == 1 else delays
    tail = f" {units.pop()}" if len(units) == 1 else ""
    if varies:
        return " / ".join(said) + tail
    return "each of " + ", ".join(said[:-1]) + f" and {said[-1]}" + tail


def seconds(delay: str) -> float:
    value, unit = delay.split()
    return float(value) / (1000 if unit == "ms" else 1)
