"""The shell reader, checked against bash itself on tens of thousands of generated lines.

The policy approves a shell line only as it reads it (`bash.parse_command`);
a line bash reads otherwise runs something the rules never saw. A past bug
was a corner of that kind: `''1<` read as a descriptor, where bash reads the
argument `1`, so every later word shifted. The strace oracle
(test_shell_policy_under_bash.py) runs about 2,000 lines a run, and its
generator never made that corner. Here:

- `helpers.adjacency` makes DIFFERENTIAL_LINES lines (at least 20,000;
  `max(20_000, 10 * ORACLE_EXAMPLES)` unless DIFFERENTIAL_LINES is set) that
  put quotes, digits, escapes, continuations, braces, `!`, `~`, `#`, globs,
  every redirection operator and every separator next to each other;
- every line the policy approves runs as the runtime runs it, with argv
  printers for programs (`copilot_driver.testing.argv_printer`), and bash's
  argv, order, descriptors, exit status, messages and files must be exactly
  what the policy's reading predicts;
- a sample of the approved lines also runs under strace (`problems`), which
  sees every exec, write and socket;
- each broken reader of `MUTATED_READINGS` must be caught on the generator's
  own lines: the check is not blind to the bugs it is there for.

The seed is new each run (more lines over time) and printed on failure;
DIFFERENTIAL_SEED=N replays a run.
"""

from __future__ import annotations

import os
import random
import time
from collections import Counter
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from itertools import islice

import pytest

from copilot_driver.testing.argv_printer import ArgvPrinter, Expected, Record, differences, expect
from copilot_driver.testing.bash_oracle import BashOracle
from helpers.adjacency import (
    INTERESTING,
    OPERATORS,
    RULES,
    Line,
    Token,
    lines,
)
from helpers.shell_oracle import (
    MUTATIONS,
    approved,
    differential,
    mutated,
    problems,
    reading,
)

ORACLE_EXAMPLES = int(os.environ.get("ORACLE_EXAMPLES", "2000"))
DIFFERENTIAL_LINES = int(
    os.environ.get("DIFFERENTIAL_LINES", str(max(20_000, 10 * ORACLE_EXAMPLES)))
)
SEED = int(os.environ.get("DIFFERENTIAL_SEED", str(random.SystemRandom().randrange(2**32))))
MUTATION_LINES = 3_000
"""Per broken reader: lines until the first mismatch, at most this many."""
STRACE_SAMPLE = 200
APPROVED_SHARE = 0.30
INTERESTING_FLOOR = 500
"""Approved lines with a corner of INTERESTING, per 20,000 lines."""
RARE_FLOOR = 20
"""Approved lines with each wanted feature (an operator, a glued pair...), per 20,000 lines."""
SAFE_KINDS = ("plain", "digits", "single", "double", "escape", "continuation")
"""Pieces a covered line may glue in any order: each pair must be approved and checked."""
SEPARATORS = ("separator:;", "separator:&&", "separator:||", "separator:|", "separator:|&")


def _replay() -> str:
    return f"seed {SEED} (DIFFERENTIAL_SEED={SEED} replays it)"


def test_the_reader_reads_generated_lines_as_bash_does(argv_printer: ArgvPrinter) -> None:
    """Every approved line of DIFFERENTIAL_LINES runs exactly as the policy read it.

    Not vacuous: at least 30% are approved and run, INTERESTING corners are among
    them by the hundreds, and every operator, separator and glued pair of SAFE_KINDS.
    """
    print(f"\n{_replay()}")  # shown with the failure, whatever it is
    started = time.perf_counter()
    generated = {line.text: line for line in lines(SEED, DIFFERENTIAL_LINES)}
    checked, mismatches = differential(argv_printer, RULES, list(generated))
    elapsed = time.perf_counter() - started
    coverage = Counter(feature for text in checked for feature in generated[text].features())
    interesting = sum(1 for text in checked if generated[text].features() & set(INTERESTING))
    print(
        f"{DIFFERENTIAL_LINES} lines ({len(generated)} distinct), {len(checked)} approved and "
        f"run in {elapsed:.1f} s on {argv_printer.lanes} lanes, {len(mismatches)} mismatches, "
        f"approved lines with a corner: {interesting}"
    )
    for feature, count in sorted(coverage.items(), key=lambda item: (-item[1], item[0])):
        print(f"  {count:6}  {feature!r}")

    if mismatches:
        shortest = sorted(mismatches, key=lambda mismatch: len(mismatch.line))[:10]
        smallest = [_shrink(argv_printer, generated[m.line].tokens) for m in shortest[:5]]
        pytest.fail(
            f"{len(mismatches)} approved lines run otherwise than read, {_replay()}:\n"
            + "\n".join(map(str, shortest))
            + "\nshrunk: "
            + "\n".join(map(repr, smallest))
        )
    assert len(checked) >= APPROVED_SHARE * len(generated), len(checked)
    scale = DIFFERENTIAL_LINES / 20_000
    assert interesting >= INTERESTING_FLOOR * scale, f"only {interesting} approved with a corner"
    # Not "quoted digits glued to a redirection": the reader refuses those lines (bash reads
    # an argument there); test_a_broken_reader_... shows they are caught once approved.
    wanted = [
        "quoted digits as a redirection's target",
        "continuation inside an operator",
        "a continuation between digits and a redirection",
        *(f"redirection:{operator}" for operator in OPERATORS),
        *SEPARATORS,
        "separator:\n",
        "comment",
        "bang",
        "lookalike",
        *(f"{a}+{b}" for a in SAFE_KINDS for b in SAFE_KINDS),
        *(f"{kind}+redirection" for kind in ("digits", "continuation")),
        *(f"redirection+{kind}" for kind in SAFE_KINDS),
    ]
    rare = {f: coverage[f] for f in wanted if coverage[f] < max(1, RARE_FLOOR * scale)}
    assert not rare, f"checked too rarely (approved lines): {rare}"


def _shrink(printer: ArgvPrinter, tokens: Sequence[Token]) -> str:
    """The line with as many tokens left out as keep it approved and run otherwise than read."""
    kept = list(tokens)
    shrunk = True
    while shrunk:
        shrunk = False
        for index in range(len(kept)):
            candidate = kept[:index] + kept[index + 1 :]
            text = "".join(text for _, text in candidate)
            if candidate and differential(printer, RULES, [text])[1]:
                kept, shrunk = candidate, True
                break
    return "".join(text for _, text in kept)


def test_a_sample_does_under_strace_only_what_was_read(adjacency_oracle: BashOracle) -> None:
    """STRACE_SAMPLE approved lines, corners first, under the strace oracle: every exec
    predicted word for word, no write but /dev/null, no socket."""
    print(f"\n{_replay()}")
    sample: list[Line] = []
    others: list[Line] = []
    for line in lines(SEED ^ 0x5EED, 20 * STRACE_SAMPLE):
        if not approved(RULES, line.text):
            continue
        commands = reading(line.text)
        every_stub_succeeds = {command.name: 0 for command in commands}
        if expect(commands, every_stub_succeeds).errors:
            continue  # bash refuses a redirection: not every predicted command runs
        (sample if line.features() & set(INTERESTING) else others).append(line)
    chosen = [line.text for line in (sample + others)[:STRACE_SAMPLE]]
    assert len(chosen) == STRACE_SAMPLE, len(chosen)

    def check(text: str) -> list[str]:
        return problems(adjacency_oracle, RULES, text, exact=True)

    with ThreadPoolExecutor(2) as pool:
        results = zip(chosen, pool.map(check, chosen), strict=True)
        found = {text: issues for text, issues in results if issues}
    report = "\n".join(f"{text!r}: {issues}" for text, issues in found.items())
    assert not found, f"{len(found)} of {len(chosen)} lines, {_replay()}:\n{report}"


@pytest.mark.parametrize("mutation", MUTATIONS)
def test_a_broken_reader_is_caught_on_generated_lines(
    argv_printer: ArgvPrinter, mutation: str
) -> None:
    """With one of bash's rules broken in the policy's reader (and so in its prediction),
    the generator's lines show a mismatch within MUTATION_LINES. Only a line where the
    real reader agrees with bash (or refuses it) counts: the mutation is what was caught."""
    print(f"\n{_replay()}")
    generated = lines(SEED, MUTATION_LINES)
    seen = 0
    while batch := [line.text for line in islice(generated, 200)]:
        seen += len(batch)
        with mutated(mutation):
            _, mismatches = differential(argv_printer, RULES, batch)
        _, real = differential(argv_printer, RULES, [mismatch.line for mismatch in mismatches])
        caught = [m for m in mismatches if m.line not in {r.line for r in real}]
        if caught:
            print(f"{mutation}: caught after {seen} lines: {caught[0]}")
            return
    pytest.fail(f"{MUTATION_LINES} lines and no mismatch with {mutation}, {_replay()}")


# -- the printers themselves ----------------------------------------------------------------------

_NONE = "-" * 7
KNOWN: tuple[tuple[str, Expected], ...] = (
    ("ls 'a b' \\\n c", Expected(((Record("noe" + _NONE, ("ls", "a b", "c")),),), 0, False)),
    ("ls 2>&1 >/dev/null", Expected(((Record("nno" + _NONE, ("ls",)),),), 0, False)),
    (
        "grep x |& wc 3>/dev/null",
        Expected(
            ((Record("npp" + _NONE, ("grep", "x")), Record("poen------", ("wc",))),), 0, False
        ),
    ),
    (
        "grep && ls || diff ''1 >&2",
        Expected(
            ((Record("noe" + _NONE, ("grep",)),), (Record("nee" + _NONE, ("diff", "1")),)), 1, False
        ),
    ),
    ("ls <&4; cat", Expected(((), (Record("noe" + _NONE, ("cat",)),)), 0, True)),
)
"""Lines with what bash does with them, written out by hand."""


@pytest.mark.parametrize(("line", "expected"), KNOWN, ids=[line for line, _ in KNOWN])
def test_the_printers_see_argv_descriptors_and_statuses(
    argv_printer: ArgvPrinter, line: str, expected: Expected
) -> None:
    (run,) = argv_printer.run([line])
    assert differences(run, expected) == []
    assert expect(reading(line), argv_printer.statuses) == expected


def test_the_printers_see_a_wrong_reading(argv_printer: ArgvPrinter) -> None:
    """A reading that shifts an argument into a descriptor (the past bug) is a mismatch."""
    (run,) = argv_printer.run(["ls ''1>/dev/null x"])
    assert differences(run, expect(reading("ls 1>/dev/null x"), argv_printer.statuses))
