"""The github-copilot-sdk builds whose generated modules were verified to load lazily.

A release is listed once the project's tests compared, in CI, every public name of
`copilot.rpc` and `copilot.session_events` imported lazily (in shuffled orders)
with the eager import (`tests/e2e/test_sdk_loading_e2e.py`, over the wheels `make
setup` caches), and ran the driver's end-to-end tests lazily on the oldest and the
newest. The lazy loader is used only when the installed files have exactly one
listed set of sha256 digests: the digests, not the version a package claims, say
which code runs. A test keeps the versions here equal to
`compatibility.TESTED_SDK_VERSIONS` and the digests equal to the cached wheels'.
"""

from __future__ import annotations

from collections.abc import Mapping

VERIFIED_SDK_FILES: dict[str, dict[str, str]] = {
    "1.0.13": {
        "generated/session_events.py": "2fa7175a66dbd5d76c9db9d33ff6d3b18dd383fd8065838cbc94893d2eb885aa",
        "generated/rpc.py": "0dd7ca6eb6c816fb4d1e672eeb8a8c33b755a1b85708cc2d24d820d499cbcb3c",
        "session_events.py": "16c6cf506e9f7e4835fda8555aad55516666dd4163478ef6fe4188ddb5c4e422",
        "rpc.py": "111d327c4af7e2f6eec5042d08b82f16abdf56f124755e36b4ed052a8ef74ae8",
    },
    "1.0.14": {
        "generated/session_events.py": "60645164ceedb83fb01cbb03acd86dc4be5cf57c648968e39e9c6b5a09fc980c",
        "generated/rpc.py": "e937841d1e9e63776eaf86308c2cdcb633fdc3ca8632e30b7d7432c6655ab879",
        "session_events.py": "16c6cf506e9f7e4835fda8555aad55516666dd4163478ef6fe4188ddb5c4e422",
        "rpc.py": "c19b768f0313f1b12eecfce14c8fc8b632c1e962f6a37fc4eb728c25eea5695a",
    },
    "1.0.15": {
        "generated/session_events.py": "5ec1dfad290167bfcd069d91c4df36cdb711ea2edf9cf96bd66db60cb6a84490",
        "generated/rpc.py": "a97ada92951fee6b4adfd73fa344da6329e15ce64b30cb1e804d70e9c34c74d3",
        "session_events.py": "16c6cf506e9f7e4835fda8555aad55516666dd4163478ef6fe4188ddb5c4e422",
        "rpc.py": "c19b768f0313f1b12eecfce14c8fc8b632c1e962f6a37fc4eb728c25eea5695a",
    },
    "1.0.16": {
        "generated/session_events.py": "52fef02a627132d4930af6a715e6ba2ace782167d639fe07f931157977e6d376",
        "generated/rpc.py": "4e87b87ffd0d33b020aaf3e631135f8a10f7eeaeddb3adc75870a46e6c054413",
        "session_events.py": "16c6cf506e9f7e4835fda8555aad55516666dd4163478ef6fe4188ddb5c4e422",
        "rpc.py": "c19b768f0313f1b12eecfce14c8fc8b632c1e962f6a37fc4eb728c25eea5695a",
    },
    "1.0.17": {
        "generated/session_events.py": "f70c55aa796effaed1be668ab6129711142bb328ec1372bf6644f0cc8a891556",
        "generated/rpc.py": "e13279186724ffe4839270d67d5689f339657a5f094776156ff62ad68f2a3eba",
        "session_events.py": "16c6cf506e9f7e4835fda8555aad55516666dd4163478ef6fe4188ddb5c4e422",
        "rpc.py": "c19b768f0313f1b12eecfce14c8fc8b632c1e962f6a37fc4eb728c25eea5695a",
    },
    "1.0.18": {
        "generated/session_events.py": "abec773e6ec46f58d2e5d11c849adfef1350bddd3225d280bc8be31b9100dd4a",
        "generated/rpc.py": "6798cd277106a8bc5e7f595399b6b9c318e563c4f909f06236bce5d84e610228",
        "session_events.py": "16c6cf506e9f7e4835fda8555aad55516666dd4163478ef6fe4188ddb5c4e422",
        "rpc.py": "c19b768f0313f1b12eecfce14c8fc8b632c1e962f6a37fc4eb728c25eea5695a",
    },
    "1.0.19": {
        "generated/session_events.py": "f4f7c9745e7cdb86e3f382ba24cbb580452438e589d5a1652789c31269807c1c",
        "generated/rpc.py": "97b540ff9d8cc8fc2bd6f2997621610782d90306d124d405257922e550c1597e",
        "session_events.py": "16c6cf506e9f7e4835fda8555aad55516666dd4163478ef6fe4188ddb5c4e422",
        "rpc.py": "c19b768f0313f1b12eecfce14c8fc8b632c1e962f6a37fc4eb728c25eea5695a",
    },
    "1.0.20": {
        "generated/session_events.py": "1b43d0ffbec0cac73c1afe4c5d85fa42a7ee59c2c53ad6b8f84e1e7751f92167",
        "generated/rpc.py": "934df07d50e6c0e450a03f695026f7f1fcc64883ebd896d4156309607f63adbc",
        "session_events.py": "16c6cf506e9f7e4835fda8555aad55516666dd4163478ef6fe4188ddb5c4e422",
        "rpc.py": "c19b768f0313f1b12eecfce14c8fc8b632c1e962f6a37fc4eb728c25eea5695a",
    },
    "1.0.21": {
        "generated/session_events.py": "d10bb99b9a76389180da37fb3497d7db2656e4a59e67caf402211be8dc82e321",
        "generated/rpc.py": "fada79ddf36fe793111bfde3f7bd8b03e266e6b1009240532e54e8612f3ac98c",
        "session_events.py": "16c6cf506e9f7e4835fda8555aad55516666dd4163478ef6fe4188ddb5c4e422",
        "rpc.py": "c19b768f0313f1b12eecfce14c8fc8b632c1e962f6a37fc4eb728c25eea5695a",
    },
    "1.0.22": {
        "generated/session_events.py": "d10bb99b9a76389180da37fb3497d7db2656e4a59e67caf402211be8dc82e321",
        "generated/rpc.py": "f1d30df535858f6d248202fc320bb2405b565071857bca6bc401f95e6aae7d04",
        "session_events.py": "16c6cf506e9f7e4835fda8555aad55516666dd4163478ef6fe4188ddb5c4e422",
        "rpc.py": "c19b768f0313f1b12eecfce14c8fc8b632c1e962f6a37fc4eb728c25eea5695a",
    },
    "1.0.23": {
        "generated/session_events.py": "0154787344f763de25b6388297e54bdd9606b2bf108573a77dcacfb0ecd70ec5",
        "generated/rpc.py": "1d38e8ba0fb58c0bf30691bdb359e7fc64a29a4425afc8ca184861736d07c637",
        "session_events.py": "16c6cf506e9f7e4835fda8555aad55516666dd4163478ef6fe4188ddb5c4e422",
        "rpc.py": "c19b768f0313f1b12eecfce14c8fc8b632c1e962f6a37fc4eb728c25eea5695a",
    },
    "1.0.24": {
        "generated/session_events.py": "30a3b89aee9e73aec8ccaace4ee064df81a4c591906e8ba33c4c44bed7913322",
        "generated/rpc.py": "9d19597e65108607d172d4d9fe403229206476e77a2d3f57c0df4b1146786f61",
        "session_events.py": "16c6cf506e9f7e4835fda8555aad55516666dd4163478ef6fe4188ddb5c4e422",
        "rpc.py": "c19b768f0313f1b12eecfce14c8fc8b632c1e962f6a37fc4eb728c25eea5695a",
    },
    "1.0.25": {
        "generated/session_events.py": "4ae8f6d7f07f5a224ae1d9e2b7707bd25d46621c75f74f7667a942bd3a474f0b",
        "generated/rpc.py": "741883302995f81bf09cce16a08e084d26a1b07b80afb5de9b0f55518fef3c82",
        "session_events.py": "16c6cf506e9f7e4835fda8555aad55516666dd4163478ef6fe4188ddb5c4e422",
        "rpc.py": "c19b768f0313f1b12eecfce14c8fc8b632c1e962f6a37fc4eb728c25eea5695a",
    },
    "1.0.26": {
        "generated/session_events.py": "bc91ac3ae468eb74704a59a85dfaaf83e4e7ed7e285d94b017ef264c81ac091a",
        "generated/rpc.py": "cb992c6869cb8292d7649c9a1e41abd8c6d752cf3ff9a71c8dbeab22c230b586",
        "session_events.py": "16c6cf506e9f7e4835fda8555aad55516666dd4163478ef6fe4188ddb5c4e422",
        "rpc.py": "c19b768f0313f1b12eecfce14c8fc8b632c1e962f6a37fc4eb728c25eea5695a",
    },
    "1.0.27": {
        "generated/session_events.py": "bc91ac3ae468eb74704a59a85dfaaf83e4e7ed7e285d94b017ef264c81ac091a",
        "generated/rpc.py": "7234043fd86aa1317594f69c241aef30b29d63515f54d7ea61afec98eac54022",
        "session_events.py": "16c6cf506e9f7e4835fda8555aad55516666dd4163478ef6fe4188ddb5c4e422",
        "rpc.py": "c19b768f0313f1b12eecfce14c8fc8b632c1e962f6a37fc4eb728c25eea5695a",
    },
}
"""Release -> the sha256 of each file `cache.SDK_MODULES` names, relative to `copilot/`."""


def verified_version(hashes: Mapping[str, str]) -> str | None:
    """The verified release whose files have exactly these digests, if any."""
    for version, verified in VERIFIED_SDK_FILES.items():
        if verified == hashes:
            return version
    return None
