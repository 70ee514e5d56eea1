"""Mermaid's own renderer on the report's charts (tests/helpers/mermaid_render.mjs, on the
Mermaid `make test` installs): the label text a reader sees of each task."""

from __future__ import annotations

import json
from pathlib import Path

from helpers.report_samples import run_mermaid_script

RENDER_SCRIPT = Path(__file__).resolve().with_name("mermaid_render.mjs")


def rendered_labels(tmp_path: Path, *charts: list[str]) -> list[list[str]]:
    """Each chart (its lines, fences excluded) rendered: its tasks' labels as shown, in
    order, surrounding spaces dropped. Skips without node or Mermaid, but fails under CI
    (`CI=true`); fails when Mermaid cannot render a chart."""
    completed = run_mermaid_script(RENDER_SCRIPT, tmp_path, charts)
    assert completed.returncode == 0, completed.stderr
    reports = [json.loads(line) for line in completed.stdout.splitlines()]
    return [[label.strip() for label in report["labels"]] for report in reports]
