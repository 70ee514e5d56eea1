"""`python -m copilot_driver.gh_aw`: the driver file a gh-aw workflow names.

gh-aw runs a custom engine driver as `python3 <workspace>/<driver file>
<copilot binary>`: it accepts a `.py` path, not a module. The file this
writes runs `python -m copilot_driver` in place (same arguments, same exit
status). Its name must not be `copilot_driver.py`: Python puts the script's
folder first on the import path, and the file would hide the package.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from copilot_driver import __version__

DEFAULT_PATH = Path(".github/drivers/copilot-driver.py")
DRIVER_FILE = '''\
"""gh-aw engine driver: runs copilot-driver (python -m copilot_driver) in place.

Written by `python -m copilot_driver.gh_aw`; name it in the workflow as
`engine: {id: copilot, driver: .github/drivers/copilot-driver.py}`.
"""

import os
import sys

# Python put this file's folder (in the workspace) first on the import path: a
# `copilot_driver` folder a tool wrote there must not be imported in the package's place.
_HERE = os.path.dirname(os.path.realpath(__file__))
sys.path[:] = [entry for entry in sys.path if os.path.realpath(entry or ".") != _HERE]

try:
    from copilot_driver.cli import run
except ModuleNotFoundError as error:  # the package, or one of its requirements
    sys.stderr.write(
        f"[copilot-sdk-driver] error: {sys.executable} cannot import "
        f"{error.name or 'copilot_driver'} "
        f"(PYTHONPATH={os.environ.get('PYTHONPATH', '')!r}): install the package into a "
        'folder in a step before the agent, `pip install --target "$GITHUB_WORKSPACE/'
        '.copilot-driver/python" "copilot-driver @ git+https://github.com/<owner>/'
        'copilot-driver@<ref>"` (see its README), and point the engine at it, '
        "`engine.env.PYTHONPATH: ${{ github.workspace }}/.copilot-driver/python`\\n"
    )
    sys.exit(2)

run()
'''


def write_driver_file(path: Path) -> None:
    """Write the driver file at `path` (folders created); an existing file is replaced."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(DRIVER_FILE, encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m copilot_driver.gh_aw",
        description="Write the driver file a gh-aw workflow names as its engine driver.",
    )
    parser.add_argument("path", nargs="?", type=Path, default=DEFAULT_PATH)
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    args = parser.parse_args(argv)
    if args.path.name == "copilot_driver.py":
        parser.error("name the file anything but copilot_driver.py: it would hide the package")
    try:
        write_driver_file(args.path)
    except OSError as error:
        sys.stderr.write(f"copilot-driver gh-aw: error: cannot write {args.path}: {error}\n")
        return 1
    sys.stdout.write(
        f"wrote {args.path}; in the workflow: engine: {{id: copilot, driver: {args.path}}}\n"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
