"""`python -m copilot_driver.gh_aw`: the driver file a gh-aw workflow names.

gh-aw runs a custom engine driver as `python3 <workspace>/<driver file>
<copilot binary>`: it accepts a `.py` path, not a module. The file this
writes runs `python -m copilot_driver` in place (same arguments, same exit
status). Its name must not be `copilot_driver.py`: Python puts the script's
folder first on the import path, and the file would hide the package.
"""

from __future__ import annotations

import sys
from pathlib import Path

from copilot_driver import __version__
from copilot_driver.command_line import CommandParser, refuse

COMMAND = "copilot-driver-gh-aw"

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


def path_problem(path: Path) -> str | None:
    """Why the command would not write `path`, with the fix; None when it may.

    Missing folders are made only below the current directory (`.github/drivers` in a
    fresh checkout): elsewhere a missing folder is more likely a typing mistake than a
    request to create folders from `/` down, as root may."""
    if path.name == "copilot_driver.py":
        return (
            f"{path} would hide the package (Python puts the file's folder first on the "
            "import path); name it anything else, e.g. .github/drivers/copilot-driver.py"
        )
    if path.is_dir():
        return f"{path} is a folder; give the file's path, e.g. {path / DEFAULT_PATH.name}"
    folder = path.parent
    if folder.is_dir():
        return None
    existing = next(parent for parent in folder.parents if parent.is_dir()).resolve()
    here = Path.cwd().resolve()
    if here != Path("/") and (existing == here or here in existing.parents):
        return None
    return (
        f"the folder {folder} does not exist; create it first (`mkdir -p {folder}`), or "
        "give a path in an existing folder or below the current directory"
    )


def main(argv: list[str] | None = None) -> int:
    parser = CommandParser(
        prog="python -m copilot_driver.gh_aw",
        command=COMMAND,
        description="Write the driver file a gh-aw workflow names as its engine driver. "
        "Folders below the current directory are made as needed (`.github/drivers` in a "
        "checkout); a path elsewhere needs its folder to exist.",
    )
    parser.add_argument(
        "path",
        nargs="?",
        type=Path,
        default=DEFAULT_PATH,
        help=f"where to write it (default: {DEFAULT_PATH})",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    args = parser.parse_args(argv)
    problem = path_problem(args.path)
    if problem is not None:
        return refuse(COMMAND, problem)
    try:
        write_driver_file(args.path)
    except OSError as error:
        return refuse(
            COMMAND,
            f"cannot write {args.path} ({error.strerror or error}); give a path in a folder "
            "you can write",
        )
    sys.stdout.write(
        f"wrote {args.path}; in the workflow: engine: {{id: copilot, driver: {args.path}}}\n"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
