"""Shortened quotes and UTC timestamps, shared by every part."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

from hypothesis import given
from hypothesis import strategies as st

from copilot_driver.formatting import escape_line_breaks, iso_utc, parse_iso, shorten


def test_shorten_collapses_blanks_and_cuts_with_an_ellipsis() -> None:
    assert shorten("a  b\n c", 10) == "a b c"
    assert shorten("abcdefghij", 8) == "abcde..."
    assert shorten("a\nb", 10, one_line=False) == "a\nb"
    assert shorten("abc", 2) == "..."


@given(st.text(), st.integers(min_value=3, max_value=200))
def test_shorten_never_exceeds_its_limit(text: str, limit: int) -> None:
    assert len(shorten(text, limit)) <= limit


@given(st.text(alphabet=st.sampled_from("ab \t\n\x1c\u2028\u00a0é")), st.integers(0, 40))
def test_shorten_reads_as_if_it_collapsed_the_whole_text_first(text: str, limit: int) -> None:
    """It stops reading at the cut; what it returns is what collapsing everything gives."""
    flat = " ".join(text.split())
    expected = flat if len(flat) <= limit else flat[: max(0, limit - 3)] + "..."
    assert shorten(text, limit) == expected


def test_escape_line_breaks() -> None:
    assert escape_line_breaks("a\r\nb") == "a\\r\\nb"


def test_iso_utc_has_milliseconds_and_a_z() -> None:
    moment = datetime(2026, 11, 24, 23, 36, 40, 123456, tzinfo=UTC)
    assert iso_utc(moment) == "2026-11-24T23:36:40.123Z"
    assert iso_utc(moment.timestamp()) == "2026-11-24T23:36:40.123Z"
    east = moment.astimezone(timezone(timedelta(hours=2)))
    assert iso_utc(east) == "2026-11-24T23:36:40.123Z"
    assert iso_utc().endswith("Z")


def test_parse_iso_reads_what_iso_utc_writes_and_nothing_else() -> None:
    moment = datetime(2026, 11, 24, 23, 36, 40, 123000, tzinfo=UTC)
    assert parse_iso(iso_utc(moment)) == moment
    assert parse_iso("2026-11-24T23:36:40") == moment.replace(microsecond=0)
    for odd in (None, "", "yesterday", 42, ["2026-11-24"]):
        assert parse_iso(odd) is None


def test_shorten_with_another_ellipsis_keeps_the_limit() -> None:
    assert shorten("abcdef", 4, ellipsis="…") == "abc…"
    assert shorten("a\nbcdef", 4, one_line=False, ellipsis="…") == "a\nb…"
