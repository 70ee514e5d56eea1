"""The lazy loader's proof on every tested SDK release, and the driver's choice.

For each release of `compatibility.TESTED_SDK_VERSIONS` (unpacked by `make
setup`), its four files must have the digests `verified.py` lists, and a fresh
build must pass its verification: a child process importing the release eagerly
and two importing it lazily, each touching the public names in a different
random order (the seeds are in the failure message), describe every public name
of `copilot.rpc` and `copilot.session_events` identically (`fingerprint`). The
driver's own e2e tests run lazily on the oldest and the newest release
(`test_driver_e2e.py`); here, the driver says which way it loaded the SDK.
"""

from __future__ import annotations

import os
import random
import re
import subprocess
import sys
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from copilot_driver.compatibility import TESTED_SDK_VERSIONS
from copilot_driver.sdk_loading.cache import source_hashes
from copilot_driver.sdk_loading.verified import VERIFIED_SDK_FILES
from copilot_driver.testing.fixtures import DriverRun, DriverRunner
from helpers.sdk_releases import release_dir, release_environment

pytestmark = pytest.mark.e2e

MAKEFILE = Path(__file__).parents[2] / "Makefile"


def _connection_start(run: DriverRun) -> dict[str, Any]:
    (entry,) = run.entries("connection.start")
    return entry


def test_every_tested_release_is_verified_with_the_digests_of_its_files() -> None:
    assert list(VERIFIED_SDK_FILES) == list(TESTED_SDK_VERSIONS)
    listed = re.search(r"^SDK_RELEASES := ((?:.*\\\n)*.*)$", MAKEFILE.read_text(), re.M)
    assert listed is not None
    assert listed.group(1).replace("\\\n", " ").split() == list(TESTED_SDK_VERSIONS)
    for version in TESTED_SDK_VERSIONS:
        files = source_hashes(release_dir(version) / "copilot")
        assert files == VERIFIED_SDK_FILES[version], version


@dataclass(frozen=True)
class ReleaseBuild:
    """`python -m copilot_driver.sdk_loading build` run on one release, and then `status`."""

    seeds: tuple[int, int]
    build: subprocess.CompletedProcess[str]
    status: subprocess.CompletedProcess[str]


def _build_release(version: str, cache_dir: Path) -> ReleaseBuild:
    seeds = (random.randrange(2**32), random.randrange(2**32))
    options = ["--cache-dir", str(cache_dir)]
    command = [sys.executable, "-m", "copilot_driver.sdk_loading"]
    env = release_environment(version)

    def run(*arguments: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [*command, *arguments, *options], env=env, capture_output=True, text=True, timeout=600
        )

    built = run("build", "--order-seeds", ",".join(map(str, seeds)))
    return ReleaseBuild(seeds, built, run("status"))


@pytest.fixture(scope="module")
def release_builds(
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[dict[str, Future[ReleaseBuild]]]:
    """Every release's build, two at a time in the background (each is a few child
    processes, mostly one CPU each), so the tests below wait only for their own."""
    cache_dir = tmp_path_factory.mktemp("sdk-caches")
    for version in TESTED_SDK_VERSIONS:
        release_dir(version)
    with ThreadPoolExecutor(max_workers=2) as pool:
        futures = {
            version: pool.submit(_build_release, version, cache_dir)
            for version in TESTED_SDK_VERSIONS
        }
        yield futures
        for future in futures.values():
            future.cancel()


@pytest.mark.parametrize("version", TESTED_SDK_VERSIONS)
def test_a_lazy_import_describes_every_public_name_as_the_eager_one(
    version: str, release_builds: dict[str, Future[ReleaseBuild]]
) -> None:
    """A fresh build verifies (eager == lazy in two random orders), and is then used."""
    done = release_builds[version].result()
    assert done.build.returncode == 0, f"access orders {done.seeds}: {done.build.stderr}"
    assert "built and verified" in done.build.stdout
    assert f"the SDK loads lazy: github-copilot-sdk {version}," in done.status.stdout


THREADS_SCRIPT = """
import random, sys, threading
from copilot_driver.sdk_loading import install
loading = install()
assert loading.lazy, loading.reason
import copilot.rpc, copilot.session_events
modules = (copilot.rpc, copilot.session_events)
names = [(module, name) for module in modules for name in module.__all__]
barrier = threading.Barrier(8)
seen, errors = [], []

def look_up(seed):
    order = names[:]
    random.Random(seed).shuffle(order)
    barrier.wait()
    try:
        seen.append({(module.__name__, name): getattr(module, name) for module, name in order})
    except BaseException as error:
        errors.append(repr(error))

threads = [threading.Thread(target=look_up, args=(seed,)) for seed in range(8)]
for thread in threads:
    thread.start()
for thread in threads:
    thread.join()
assert not errors, errors
assert len(seen) == 8 and all(found.keys() == seen[0].keys() for found in seen)
different = [key for key in seen[0] if any(found[key] is not seen[0][key] for found in seen)]
assert not different, different[:5]
print(len(seen[0]))
"""


def test_eight_threads_building_the_same_names_at_once_get_the_same_objects(
    tmp_path: Path,
) -> None:
    """On the installed SDK and its cache (`make setup` builds it in the user's cache
    folder), run outside the clone: `make`'s XDG_CACHE_HOME lies in it, and a cache in
    the working directory (the workspace, without GITHUB_WORKSPACE) is never used."""
    done = subprocess.run(
        [sys.executable, "-c", THREADS_SCRIPT],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
        env={k: v for k, v in os.environ.items() if k != "GITHUB_WORKSPACE"},
    )
    assert done.returncode == 0, done.stderr
    assert int(done.stdout) > 2000


def test_the_driver_loads_the_sdk_lazily_and_says_so(driver: DriverRunner) -> None:
    run = driver.run("say hello")
    assert run.exit_code == 0, run.stderr
    entry = _connection_start(run)
    assert entry["sdkLoading"] == "lazy", entry["sdkLoadingReason"]


def test_eager_loading_is_one_variable_away(driver: DriverRunner) -> None:
    run = driver.run("say hello", COPILOT_DRIVER_SDK_LOADING="eager")
    assert run.exit_code == 0, run.stderr
    entry = _connection_start(run)
    assert (entry["sdkLoading"], entry["sdkLoadingReason"]) == (
        "eager",
        "COPILOT_DRIVER_SDK_LOADING=eager",
    )


def test_an_unreadable_choice_means_eager_with_a_warning(driver: DriverRunner) -> None:
    run = driver.run("say hello", COPILOT_DRIVER_SDK_LOADING="off")
    assert run.exit_code == 0, run.stderr
    assert _connection_start(run)["sdkLoading"] == "eager"
    fallbacks = run.entries("config.fallback")
    assert any("COPILOT_DRIVER_SDK_LOADING" in str(entry["message"]) for entry in fallbacks)


def test_a_missing_cache_means_eager_naming_the_build_command(
    driver: DriverRunner, tmp_path: Path
) -> None:
    """The driver run from an SDK copy no cache was built for: eager, and it says why."""
    copy = tmp_path / "sdk"
    release = release_dir(TESTED_SDK_VERSIONS[-1])
    subprocess.run(["cp", "-a", str(release), str(copy)], check=True)
    env = driver.environment("say hello")
    env["PYTHONPATH"] = str(copy)
    run = driver.run("say hello", env=env)
    assert run.exit_code == 0, run.stderr
    entry = _connection_start(run)
    assert entry["sdkLoading"] == "eager"
    assert "python -m copilot_driver.sdk_loading build" in entry["sdkLoadingReason"]
