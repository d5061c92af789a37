"""The README's pictures are made again from the committed quick run by one command: each chart and the report's
screenshot is a real PNG of the size it is drawn at, and what is committed under docs/images is what it makes."""

from __future__ import annotations

import shutil
import struct
from pathlib import Path

import pytest
from analysis_markers import needs_gnuplot

from crossbench_analysis import pictures

REPO = Path(__file__).resolve().parents[2]
pytestmark = [
    needs_gnuplot,
    pytest.mark.spawns,
    pytest.mark.skipif(
        not any(shutil.which(name) for name in pictures.BROWSERS),
        reason="Chromium not installed (apt-get install chromium); the report's picture needs it",
    ),
]


def png_size(path: Path) -> tuple[int, int]:
    head = path.read_bytes()[:24]
    assert head[:8] == b"\x89PNG\r\n\x1a\n", f"{path.name} is not a PNG"
    return struct.unpack(">II", head[16:24])


def test_the_pictures_are_made_from_the_committed_quick_run(tmp_path):
    made = {p.name: p for p in pictures.make(REPO / "docs" / "results", tmp_path)}
    assert set(made) == {*pictures.CHARTS.values(), pictures.REPORT_SHOT}
    assert png_size(made[pictures.REPORT_SHOT]) == tuple(int(v) for v in pictures.WINDOW.split(","))
    for name in pictures.CHARTS.values():
        width, height = png_size(made[name])
        assert width >= 600 and height >= 300, name
        assert (REPO / "docs" / "images" / name).is_file(), f"docs/images/{name} is not committed"
    # a blank page compresses to a few kilobytes; the report's text and table do not
    assert made[pictures.REPORT_SHOT].stat().st_size > 50_000


def test_a_results_folder_without_a_quick_run_is_refused_in_one_line(tmp_path):
    with pytest.raises(pictures.PicturesError, match="holds no quick run"):
        pictures.make(tmp_path, tmp_path / "out")
