"""`python -m copilot_driver.sdk_loading build|status`: the lazy-loading cache by hand.

`build` makes and verifies the cache for the SDK this Python imports (run it
after installing or upgrading copilot-driver or github-copilot-sdk; `make
setup`, the GitHub Action and gh-aw's install step run it). `status` says what a
driver run would do and why. `describe` is the build's child process (unlisted).
Both work on the user's cache folder (`folder.default_cache_dir`) unless given
`--cache-dir`.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import cast

from copilot_driver import __version__
from copilot_driver.command_line import CommandParser, error_line, refuse
from copilot_driver.env import SDK_LOADING
from copilot_driver.sdk_loading import Mode, install, install_cache, sdk_folder
from copilot_driver.sdk_loading.cache import SDK_MODULES
from copilot_driver.sdk_loading.folder import default_cache_dir

COMMAND = "copilot-driver-sdk-loading"
PREFIX = f"[{COMMAND}]"
DESCRIBE = "describe"
"""The build's child process (`build.describe_in_child`), kept out of the help."""
CACHE_DIR_HELP = (
    "the cache folder (default: $XDG_CACHE_HOME/copilot-driver/sdk-loading, else "
    "~/.cache/copilot-driver/sdk-loading)"
)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == [DESCRIBE]:  # the build's child process: no command of the user's
        return _describe_main(argv[1:])
    parser = CommandParser(
        prog="python -m copilot_driver.sdk_loading",
        command=COMMAND,
        description="Build or inspect the cache that lets the driver import the SDK's "
        "generated modules lazily. The caches live in the user's cache folder "
        "(XDG_CACHE_HOME, else ~/.cache), under copilot-driver/sdk-loading.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    commands = parser.add_subparsers(dest="command", required=True)
    build_command = commands.add_parser("build", help="build and verify the cache", command=COMMAND)
    build_command.add_argument("--cache-dir", type=Path, help=CACHE_DIR_HELP)
    build_command.add_argument("--force", action="store_true", help="rebuild even if present")
    build_command.add_argument(
        "--order-seeds",
        type=_seeds,
        default=(1,),
        help="comma-separated seeds of the shuffled orders the verification touches the "
        "public names in, one lazy child process each (default: 1)",
    )
    status_command = commands.add_parser(
        "status", help="what a driver run would do, and why", command=COMMAND
    )
    status_command.add_argument("--cache-dir", type=Path, help=CACHE_DIR_HELP)
    args = parser.parse_args(argv)
    cache_dir = args.cache_dir or default_cache_dir()
    if cache_dir is None:
        return refuse(
            COMMAND,
            "there is no cache folder: neither XDG_CACHE_HOME nor HOME is set; set one, "
            "or give --cache-dir",
        )
    if args.command == "build":
        return _build(cache_dir, force=args.force, order_seeds=args.order_seeds)
    notices: list[str] = []
    mode = SDK_LOADING.soft_value(os.environ.get(SDK_LOADING.name), notices, str)
    for notice in notices:
        print(f"{PREFIX} warning: {notice}", file=sys.stderr)
    loading = install(cast(Mode, mode), cache_dir=cache_dir)
    print(f"{PREFIX} the SDK loads {loading.mode}: {loading.reason}")
    return 0


def _seeds(text: str) -> tuple[int, ...]:
    try:
        return tuple(int(part) for part in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(f"not comma-separated whole numbers: {text!r}") from None


def _build(cache_dir: Path, *, force: bool, order_seeds: tuple[int, ...]) -> int:
    from copilot_driver.sdk_loading.build import DescribeError, build

    try:
        outcome = build(cache_dir=cache_dir, force=force, order_seeds=order_seeds)
    except DescribeError as error:
        print(error_line(COMMAND, f"{error}; the driver imports the SDK eagerly"), file=sys.stderr)
        return 1
    except OSError as error:
        print(
            error_line(
                COMMAND,
                f"the lazy-loading cache could not be written in {cache_dir} ({error}); "
                "run this as the user that runs the driver, with the same XDG_CACHE_HOME "
                "and HOME, or give a folder you can write with --cache-dir. The driver "
                "imports the SDK eagerly meanwhile",
            ),
            file=sys.stderr,
        )
        return 1
    if outcome.ok:
        print(f"{PREFIX} {outcome.message}")
        return 0
    # One line for the reason; a verification's differences follow it, one per line.
    first, _, rest = outcome.message.partition("\n")
    print(error_line(COMMAND, first) + (f"\n{rest}" if rest else ""), file=sys.stderr)
    return 1


def _describe_main(argv: list[str]) -> int:
    parser = CommandParser(prog=f"python -m copilot_driver.sdk_loading {DESCRIBE}", command=COMMAND)
    parser.add_argument("--sdk-dir", type=Path, required=True)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--cache", type=Path)
    parser.add_argument("--order-seed", type=int)
    args = parser.parse_args(argv)
    return _describe(args.sdk_dir, args.out, args.cache, args.order_seed)


def _describe(sdk_dir: Path, out: Path, cache: Path | None, order_seed: int | None) -> int:
    from copilot_driver.sdk_loading.fingerprint import describe

    if cache is not None:
        install_cache(cache, sdk_dir)
    found = sdk_folder()
    if found != sdk_dir.resolve():
        print(error_line(COMMAND, f"this Python imports the SDK from {found}"), file=sys.stderr)
        return 1
    described = describe(order_seed=order_seed)
    loaded = {type(sys.modules[name]).__name__ for name in SDK_MODULES}
    if loaded != {"LazyModule" if cache is not None else "module"}:
        print(error_line(COMMAND, f"the SDK's modules were loaded as {loaded}"), file=sys.stderr)
        return 1
    out.write_text(json.dumps(described), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
