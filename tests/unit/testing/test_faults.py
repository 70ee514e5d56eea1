"""The fault suite's own checks must catch what they claim to catch."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from copilot_driver.testing.faults import (
    SECRET_PIECE_CHARS,
    TALLY,
    BoundedProcess,
    HungError,
    OrphanWatch,
    SecretLeakError,
    check_events_file,
    scan_for_secrets,
    secret_pieces,
    subreaper,
)

TOKEN = "0123456789abcdef" * 4


def test_every_run_of_twelve_characters_is_a_piece() -> None:
    pieces = secret_pieces(TOKEN)
    assert TOKEN[:SECRET_PIECE_CHARS] in pieces
    assert TOKEN[-SECRET_PIECE_CHARS:] in pieces
    assert all(len(piece) == SECRET_PIECE_CHARS for piece in pieces)
    assert secret_pieces("short") == {"short"}
    assert secret_pieces("") == set()


def test_a_piece_of_a_secret_in_a_nested_file_is_found_without_showing_it(
    tmp_path: Path,
) -> None:
    nested = tmp_path / "a" / "b"
    nested.mkdir(parents=True)
    (nested / "events.jsonl").write_bytes(b'{"x": "..' + TOKEN[20:34].encode() + b'.."}\n')
    with pytest.raises(SecretLeakError) as caught:
        scan_for_secrets([TOKEN], folders=[tmp_path])
    assert "events.jsonl" in str(caught.value)
    assert TOKEN[20:34] not in str(caught.value)


def test_texts_are_scanned_and_skipped_files_are_not(tmp_path: Path) -> None:
    with pytest.raises(SecretLeakError):
        scan_for_secrets([TOKEN], texts=[("stderr", f"token={TOKEN}")])
    holder = tmp_path / "sidecar.token"
    holder.write_text(TOKEN)
    (tmp_path / "clean.log").write_bytes(b"\xff\xfe not utf-8 and clean")
    before = TALLY.bytes_scanned
    scanned = scan_for_secrets([TOKEN], folders=[tmp_path], skip=[holder])
    assert scanned == len(b"\xff\xfe not utf-8 and clean")
    assert TALLY.bytes_scanned == before + scanned


def test_an_events_file_must_be_json_objects_to_its_last_full_line(tmp_path: Path) -> None:
    good = tmp_path / "good.jsonl"
    good.write_text(json.dumps({"type": "a"}) + "\n" + json.dumps({"type": "b"}) + "\n")
    assert [r["type"] for r in check_events_file(good)] == ["a", "b"]
    cut = tmp_path / "cut.jsonl"
    cut.write_text(json.dumps({"type": "a"}) + '\n{"type": "b"')
    with pytest.raises(AssertionError, match="cut"):
        check_events_file(cut)
    garbage = tmp_path / "garbage.jsonl"
    garbage.write_text("not json\n")
    with pytest.raises(AssertionError, match=r"garbage\.jsonl:1"):
        check_events_file(garbage)


def test_a_grandchild_left_running_is_seen_killed_and_reaped() -> None:
    watch = OrphanWatch()
    with subreaper():
        watch.snapshot()
        # The child starts a grandchild and exits at once: the grandchild is orphaned.
        launcher = subprocess.run(
            [sys.executable, "-c",
             "import subprocess, sys; "
             "p = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'], "
             "stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL); "
             "print(p.pid)"],
            capture_output=True, text=True, check=True,
        )  # fmt: skip
        orphan = int(launcher.stdout)
        leftovers = watch.leftovers(grace_s=0.2)
    assert [info.pid for info in leftovers] == [orphan]
    assert "time.sleep(60)" in leftovers[0].command
    assert not Path(f"/proc/{orphan}").exists()


def test_an_orphan_that_ends_within_the_grace_is_not_a_leftover() -> None:
    watch = OrphanWatch()
    with subreaper():
        watch.snapshot()
        subprocess.run(
            [sys.executable, "-c",
             "import subprocess, sys; "
             "subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(0.3)'])"],
            check=True,
        )  # fmt: skip
        assert watch.leftovers(grace_s=5) == []


def test_a_process_over_its_bound_is_killed_and_reported() -> None:
    process = BoundedProcess(
        [sys.executable, "-c", "import time; time.sleep(60)"], dict(os.environ)
    )
    started = time.monotonic()
    with pytest.raises(HungError, match=r"still running 0\.5s after the start"):
        process.end(0.5)
    assert time.monotonic() - started < 10
    assert process.process.returncode is not None


def test_the_bound_counts_from_the_fault_once_marked() -> None:
    process = BoundedProcess([sys.executable, "-c", "print('hi')"], dict(os.environ))
    process.mark_fault()
    ended = process.end(30)
    assert (ended.exit_code, ended.stdout) == (0, "hi\n")
    assert 0 <= ended.seconds < 30
