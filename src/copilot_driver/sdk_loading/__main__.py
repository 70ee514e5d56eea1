"""`python -m copilot_driver.sdk_loading build|status`: the lazy-loading cache by hand.

`build` makes and verifies the cache for the SDK this Python imports (run it
after installing or upgrading copilot-driver or github-copilot-sdk; `make
setup`, the GitHub Action and gh-aw's install step run it). `status` says what a
driver run would do and why. `describe` is the build's child process.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import cast

from copilot_driver import __version__
from copilot_driver.env import SDK_LOADING
from copilot_driver.sdk_loading import DEFAULT_CACHE_DIR, Mode, install, install_cache, sdk_folder
from copilot_driver.sdk_loading.cache import SDK_MODULES

PREFIX = "[copilot-sdk-driver]"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m copilot_driver.sdk_loading",
        description="Build or inspect the cache that lets the driver import the SDK's "
        "generated modules lazily.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    commands = parser.add_subparsers(dest="command", required=True)
    build_command = commands.add_parser("build", help="build and verify the cache")
    build_command.add_argument("--cache-dir", type=Path, default=DEFAULT_CACHE_DIR)
    build_command.add_argument("--force", action="store_true", help="rebuild even if present")
    build_command.add_argument(
        "--order-seeds",
        type=_seeds,
        default=(1,),
        help="comma-separated seeds of the shuffled orders the verification touches the "
        "public names in, one lazy child process each (default: 1)",
    )
    status_command = commands.add_parser("status", help="what a driver run would do, and why")
    status_command.add_argument("--cache-dir", type=Path, default=DEFAULT_CACHE_DIR)
    describe = commands.add_parser("describe", help=argparse.SUPPRESS)
    describe.add_argument("--sdk-dir", type=Path, required=True)
    describe.add_argument("--out", type=Path, required=True)
    describe.add_argument("--cache", type=Path)
    describe.add_argument("--order-seed", type=int)
    args = parser.parse_args(argv)
    if args.command == "build":
        return _build(args.cache_dir, force=args.force, order_seeds=args.order_seeds)
    if args.command == "status":
        notices: list[str] = []
        mode = SDK_LOADING.soft_value(os.environ.get(SDK_LOADING.name), notices, str)
        for notice in notices:
            print(f"{PREFIX} warning: {notice}", file=sys.stderr)
        loading = install(cast(Mode, mode), cache_dir=args.cache_dir)
        print(f"{PREFIX} the SDK loads {loading.mode}: {loading.reason}")
        return 0
    return _describe(args.sdk_dir, args.out, args.cache, args.order_seed)


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
        print(f"{PREFIX} error: {error}; the driver imports the SDK eagerly", file=sys.stderr)
        return 1
    except OSError as error:
        print(
            f"{PREFIX} error: the lazy-loading cache could not be written ({error}); "
            "run this as the user that installed copilot-driver. The driver imports the "
            "SDK eagerly meanwhile",
            file=sys.stderr,
        )
        return 1
    stream = sys.stdout if outcome.ok else sys.stderr
    print(f"{PREFIX} {'' if outcome.ok else 'error: '}{outcome.message}", file=stream)
    return 0 if outcome.ok else 1


def _describe(sdk_dir: Path, out: Path, cache: Path | None, order_seed: int | None) -> int:
    from copilot_driver.sdk_loading.fingerprint import describe

    if cache is not None:
        install_cache(cache, sdk_dir)
    found = sdk_folder()
    if found != sdk_dir.resolve():
        print(f"{PREFIX} error: this Python imports the SDK from {found}", file=sys.stderr)
        return 1
    described = describe(order_seed=order_seed)
    loaded = {type(sys.modules[name]).__name__ for name in SDK_MODULES}
    if loaded != {"LazyModule" if cache is not None else "module"}:
        print(f"{PREFIX} error: the SDK's modules were loaded as {loaded}", file=sys.stderr)
        return 1
    out.write_text(json.dumps(described), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
