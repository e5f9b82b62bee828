"""What a workspace command must never read: ModelGuard's keys, tokens, ledger, artifacts and state, the
system's and the users' credentials, and whatever the central policy's ``sandbox.hidden`` adds.

Two kinds:

- **secrets** (keys, key registry, token and key files, the ledger, the artifact store, ``/etc/modelguard``,
  ``/etc/shadow``, sudoers, every home's dot-entries, the policy's ``hidden``): never shown; an argument
  naming a path inside one is refused, and an output folder inside or around one is refused;
- **private folders** (``MODELGUARD_HOME`` and ModelGuard's other folders, ``/root``, ``/home``): never
  shown, except the command's own inputs and outputs that lie inside (the evaluation data ModelGuard lays out
  under ``MODELGUARD_HOME``).

The sandbox shows only an allow-list of the file system (docs/sandbox.md); these paths are hidden again
wherever they fall inside what it shows.

Finding them resolves every path's links: some 400 system calls a command, each of which lets another thread take the
interpreter's lock, so beside the services' own work it took 3 ms and more a command. This process's own set is kept for
as long as what it is made from holds: its environment (the settings and the variables it reads), its working directory,
the policy's ``hidden``, the homes and their dot-entries (listed for each command: a few system calls, and exact, where
a folder's modification time can miss an entry made within the same clock tick). A link among these paths re-pointed
while the process runs is followed once one of those changes; the view shows an allow-list in the first place, and
nothing a workspace command can write reaches these paths.
"""

from __future__ import annotations

import contextlib
import os
import re
import threading
from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from libs.settings import Settings, load_settings

SYSTEM_SECRETS = (
    "/etc/modelguard",
    "/etc/shadow",
    "/etc/shadow-",
    "/etc/gshadow",
    "/etc/gshadow-",
    "/etc/sudoers",
    "/etc/sudoers.d",
    "/etc/ssl/private",
    "/etc/ssh",
    "/etc/krb5.keytab",
    "/etc/security/opasswd",
    "/run/secrets",
    "/var/run/secrets",
)
HOMES = ("/root", "/home")
SECRET_VARIABLE = re.compile(r"^MODELGUARD_\w*(_FILE|_KEY|_KEYS_DIR|_ARTIFACTS_DIR)$")
FOLDER_VARIABLE = re.compile(r"^MODELGUARD_\w*(_DIR|_HOME)$")
CREDENTIAL_VARIABLES = (
    "GOOGLE_APPLICATION_CREDENTIALS",
    "AWS_SHARED_CREDENTIALS_FILE",
    "AWS_CONFIG_FILE",
    "AZURE_CONFIG_DIR",
    "KUBECONFIG",
    "DOCKER_CONFIG",
    "NETRC",
    "SSH_AUTH_SOCK",
    "GNUPGHOME",
)
LEDGER_SUFFIXES = ("", "-wal", "-shm", "-journal")


@dataclass(frozen=True)
class ProtectedPaths:
    secrets: tuple[Path, ...]
    private: tuple[Path, ...]

    @property
    def everything(self) -> tuple[Path, ...]:
        return tuple(dict.fromkeys([*self.secrets, *self.private]))

    def secret_holding(self, path: Path) -> Path | None:
        """The secret ``path`` lies in (or is), if any."""
        return next((secret for secret in self.secrets if inside(path, secret)), None)


def inside(path: Path, folder: Path) -> bool:
    """Whether ``path`` is ``folder`` or lies under it (both absolute and normalised)."""
    text, base = str(path), str(folder)
    return text == base or text.startswith(base if base.endswith("/") else base + "/")


def dot_entries(home: Path) -> list[Path]:
    """``~/.ssh``, ``~/.netrc``, ``~/.config``, ...: where the credentials of a user live."""
    try:
        return sorted(entry for entry in home.iterdir() if entry.name.startswith("."))
    except OSError:
        return []


def homes() -> list[Path]:
    """ModelGuard's user's home, ``/root`` and every folder of ``/home``."""
    found = [Path.home(), *(Path(home) for home in HOMES)]
    with contextlib.suppress(OSError):
        found += [entry for entry in Path("/home").iterdir() if entry.is_dir()]
    return list(dict.fromkeys(found))


def sqlite_file(url: str) -> Path | None:
    """The database file of a ``sqlite:///path`` ledger URL."""
    prefix = "sqlite:///"
    return Path(url[len(prefix) :]) if url.startswith(prefix) and len(url) > len(prefix) else None


def settings_secrets(settings: Settings) -> list[Path]:
    secrets = [settings.keys_dir, settings.key_registry_path, settings.artifacts_dir, *settings.s3_credential_files]
    ledger = sqlite_file(settings.ledger_url)
    if ledger is not None:
        secrets += [Path(f"{ledger}{suffix}") for suffix in LEDGER_SUFFIXES]
    if settings.publishing.github_app_private_key_file is not None:
        secrets.append(settings.publishing.github_app_private_key_file)
    return secrets


def settings_private(settings: Settings) -> list[Path]:
    private = [settings.home, settings.policy_dir, settings.publish_dir]
    private += [path for path in (settings.trace_file, settings.central_policy) if path is not None]
    return private


def environment_paths(environment: Mapping[str, str]) -> tuple[list[Path], list[Path]]:
    """Paths the environment names: key and token files and credential configurations (secrets), and
    ModelGuard's other folders (private)."""
    secrets: list[Path] = []
    private: list[Path] = []
    for name, value in environment.items():
        if not value.startswith("/"):
            continue
        if SECRET_VARIABLE.match(name) or name in CREDENTIAL_VARIABLES:
            secrets.append(Path(value))
        elif FOLDER_VARIABLE.match(name):
            private.append(Path(value))
    return secrets, private


def _absolute(paths: Iterable[Path]) -> tuple[Path, ...]:
    """Each path made absolute and its links resolved, the spelling given kept as well (a mount hides the
    name the command would use; the resolved one is where the bytes are)."""
    found: dict[str, None] = {}
    for path in paths:
        absolute = os.path.abspath(path)
        found[absolute] = found[os.path.realpath(absolute)] = None
    return tuple(Path(path) for path in found if path != "/")


KEPT = 8
"""Sets kept at most (one per distinct environment, policy and homes seen): a process sees one or two."""
_kept: dict[Hashable, ProtectedPaths] = {}
_kept_lock = threading.Lock()


def protected_paths(
    policy_hidden: Sequence[str] = (),
    *,
    settings: Settings | None = None,
    environment: Mapping[str, str] | None = None,
) -> ProtectedPaths:
    """Everything the sandbox hides for this ModelGuard process, from its settings, its environment, the
    system's credential files and the central policy's ``sandbox.hidden``. This process's own (no ``settings``
    nor ``environment`` given) is kept while what it is made from holds (the module's docstring)."""
    if settings is not None or environment is not None:
        return _found(policy_hidden, settings, environment, _user_homes())
    users = _user_homes()
    key = (tuple(policy_hidden), os.getcwd(), tuple(sorted(os.environ.items())), users)
    with _kept_lock:
        kept = _kept.get(key)
    if kept is not None:
        return kept
    found = _found(policy_hidden, None, None, users)
    with _kept_lock:
        if len(_kept) >= KEPT:
            _kept.clear()
        _kept[key] = found
    return found


def _user_homes() -> tuple[tuple[Path, ...], tuple[Path, ...]]:
    """The homes, and the dot-entries in them."""
    found = homes()
    return tuple(found), tuple(entry for home in found for entry in dot_entries(home))


def _found(
    policy_hidden: Sequence[str],
    settings: Settings | None,
    environment: Mapping[str, str] | None,
    users: tuple[tuple[Path, ...], tuple[Path, ...]],
) -> ProtectedPaths:
    settings = settings or load_settings()
    from_environment, folders = environment_paths(os.environ if environment is None else environment)
    user_homes, user_secrets = users
    secrets = [
        *settings_secrets(settings),
        *from_environment,
        *(Path(path) for path in SYSTEM_SECRETS),
        *(Path(path) for path in policy_hidden),
        *user_secrets,
    ]
    private = [*settings_private(settings), *folders, *user_homes]
    return ProtectedPaths(secrets=_absolute(secrets), private=_absolute(private))
