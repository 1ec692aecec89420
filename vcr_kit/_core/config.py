"""The one place that reads vcr_kit's environment variables (``VCR_*``, ``FORCE_VCR``,
``CI``), and the variables of other tools that change what vcr_kit does
(``ANTHROPIC_BASE_URL``, ``TOX_ENV_NAME``, ``PYTEST_XDIST_WORKER``,
``PYTEST_ADDOPTS``).

``.env`` is loaded once per process with python-dotenv (it never overrides a
variable that is already set); the environment itself is read on every call,
because tests change it between cases and a cassette must see the change.
Credentials are read by ``credentials`` alone.
"""

from __future__ import annotations

import math
import os
import re
import threading
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from enum import Enum
from functools import lru_cache
from pathlib import Path
from typing import Final

from ..dehydrate import disable_rules_from_environment
from ..errors import ConfigError
from .faults import Spec, parse_spec
from .platforms import BASE_URL_VARIABLES
from .providers import PROVIDERS

__all__ = [
    "CONFIG",
    "AllowedSecrets",
    "ConfigState",
    "Mode",
    "Settings",
    "activated",
    "allowed_secrets",
    "base_url",
    "base_url_set_to",
    "bedrock_upstream",
    "claude_code_clouds",
    "extra_pytest_args",
    "faults_from_environment",
    "fixtures_dir_setting",
    "foundry_upstream",
    "host_variables",
    "in_ci",
    "in_tox",
    "in_xdist_worker",
    "is_active",
    "load_settings",
    "lock_timeout",
    "mark_xdist_worker",
    "pure_json_wanted",
    "replay_mode_forced",
    "run_complete_word",
    "run_id_variable",
    "set_run_id",
    "summary_wanted",
    "variables_set_to",
    "vertex_upstream",
]


class Mode(str, Enum):
    """What a cassette does on a hit and on a miss."""

    AUTO = "auto"  # hit: replay; miss: record
    REPLAY = "replay"  # hit: replay; miss: FixtureMissingError
    RECORD = "record"  # always call the API and overwrite
    OFF = "off"  # pass through, touch no file

    def __str__(self) -> str:
        return self.value


_FALSE_WORDS: Final = frozenset({"", "0", "false", "no", "off"})
_TRUE_WORDS: Final = frozenset({"1", "true", "yes", "on"})
_PROJECT_MARKERS: Final = ("setup.cfg", "pyproject.toml", "setup.py", "tox.ini", ".git")
DEFAULT_LOCK_TIMEOUT: Final = 600.0

_TestDefaults = tuple[str | Mode | None, str | None, Path | None]


class ConfigState:
    """What this process's configuration remembers between calls: the tests running
    now, with their defaults, and the ``.env`` files already loaded."""

    __slots__ = (
        "active_tests",
        "dotenv_loaded",
        "dotenv_projects",
        "lock",
        "test_defaults",
        "xdist_worker_pid",
    )

    #: How many VCRTestCase tests (or pytest-plugin tests) are running. Process-wide,
    #: not a context variable: IsolatedAsyncioTestCase runs the test in a context
    #: copied when the case was built, and code under test may call the API from its
    #: own threads.
    active_tests: int
    #: The running tests' options (vcr_mode, vcr_fixtures_dir) and project roots (found
    #: from each test's own file), innermost last: every cassette and client in the
    #: test uses them unless given its own.
    test_defaults: list[_TestDefaults]
    #: The ``.env`` found from the cwd was loaded.
    dotenv_loaded: bool
    #: The projects whose root ``.env`` was looked for.
    dotenv_projects: set[Path]
    #: The pid of this process if pytest-xdist made it a worker (``mark_xdist_worker``);
    #: a child (forked or started) has another pid. Kept by ``reset``: set once per
    #: process, when the worker's pytest starts.
    xdist_worker_pid: int | None

    def __init__(self) -> None:
        self.lock = threading.Lock()  # guards active_tests and test_defaults
        self.active_tests = 0
        self.test_defaults = []
        self.dotenv_loaded = False
        self.dotenv_projects = set()
        self.xdist_worker_pid = None

    def reset(self) -> None:
        """As a new process: no test running, no ``.env`` loaded yet (a later read
        loads it again; it never overrides a variable already set)."""
        with self.lock:
            self.active_tests = 0
            self.test_defaults.clear()
        self.dotenv_loaded = False
        self.dotenv_projects.clear()


CONFIG: Final = ConfigState()


def truthy(value: str | None) -> bool:
    """``CI=true``, ``CI=1`` and ``CI=yes`` are on; unset, empty, ``0`` and ``false`` are off."""
    return value is not None and value.strip().lower() not in _FALSE_WORDS


def flag(name: str, default: bool = False) -> bool:
    """A yes/no variable of vcr_kit's own (``VCR_RECORD``, ``FORCE_VCR``, ``VCR_REPORT``).

    Stricter than ``truthy``: ``VCR_RECORD=maybe`` or a typo must not silently mean
    "on" (or "off"). ``CI`` stays lenient: CI systems set it to their own words.
    """
    value = os.environ.get(name)
    if value is None:
        return default
    word = value.strip().lower()
    if word in _TRUE_WORDS:
        return True
    if word in _FALSE_WORDS:
        return False
    raise ConfigError(
        f"{name}={value!r} is not a yes/no value; use 1 or 0 (or true/false, yes/no, on/off)."
    )


def lock_timeout_from(text: str | None) -> float:
    """``VCR_LOCK_TIMEOUT``: seconds to wait for another process's recording, 0 for not at
    all. The same number means the same wait for sync and async callers; a negative
    number (filelock would wait forever), ``nan`` or ``inf`` is refused."""
    if not text or not text.strip():
        return DEFAULT_LOCK_TIMEOUT
    try:
        seconds = float(text)
    except ValueError:
        seconds = math.nan
    if not math.isfinite(seconds) or seconds < 0:
        raise ConfigError(
            f"VCR_LOCK_TIMEOUT={text!r} is not a number of seconds "
            "(0 or more; 0 means do not wait for another process's recording)."
        )
    return seconds


def load_dotenv_once(project: Path | None = None) -> None:
    """Load the ``.env`` found from the cwd upwards, once per process; and the one at
    the root of ``project`` (a test's own project, which a run started from another
    folder would not find), once per project."""
    if not CONFIG.dotenv_loaded:
        CONFIG.dotenv_loaded = True
        from dotenv import find_dotenv, load_dotenv

        path = find_dotenv(usecwd=True)
        if path:
            load_dotenv(path, override=False)
    if project is not None and project not in CONFIG.dotenv_projects:
        CONFIG.dotenv_projects.add(project)
        candidate = project / ".env"
        if candidate.is_file():
            from dotenv import load_dotenv

            load_dotenv(candidate, override=False)


def parse_mode(value: str | Mode, source: str) -> Mode:
    if isinstance(value, Mode):
        return value
    try:
        return Mode(value.strip().lower())
    except ValueError:
        valid = ", ".join(m.value for m in Mode)
        raise ConfigError(
            f"{source}={value!r} is not a mode vcr_kit knows; use one of: {valid}."
        ) from None


def project_root(start: Path | None = None) -> Path:
    """The nearest folder, from the cwd upwards, that looks like a project root."""
    here = (start or Path.cwd()).resolve()
    for folder in (here, *here.parents):
        if any(_is_there(folder / marker) for marker in _PROJECT_MARKERS):
            return folder
    return here


def _is_there(path: Path) -> bool:
    """Whether ``path`` exists; one this user may not look at (a parent folder it
    cannot enter) is not taken as a marker, rather than failing every test."""
    try:
        return path.exists()
    except OSError:
        return False


@dataclass(frozen=True)
class Settings:
    mode: Mode
    fixtures_dir: Path
    #: vcr_kit was switched on from the environment (VCR_MODE or FORCE_VCR).
    forced: bool
    #: CI is set and VCR_RECORD is not: a miss must fail, never record.
    ci_locked: bool
    lock_timeout: float


def load_settings(
    *, mode: str | Mode | None = None, fixtures_dir: str | os.PathLike[str] | None = None
) -> Settings:
    """Resolve the settings of one cassette.

    Precedence for the mode: ``VCR_MODE`` (so a user can re-record a whole suite
    with ``VCR_MODE=record``), then the ``mode`` option, then the default: replay
    where ``CI`` is set and ``VCR_RECORD`` is not, auto elsewhere.
    """
    load_dotenv_once()
    env = os.environ
    test_root: Path | None = None
    if CONFIG.test_defaults:
        test_mode, test_dir, test_root = CONFIG.test_defaults[-1]
        mode = test_mode if mode is None else mode
        fixtures_dir = test_dir if fixtures_dir is None else fixtures_dir
    record_allowed = flag("VCR_RECORD")  # read even outside CI: a typo fails everywhere
    ci_locked = truthy(env.get("CI")) and not record_allowed
    env_mode = env.get("VCR_MODE")
    if env_mode:
        resolved = parse_mode(env_mode, "VCR_MODE")
    elif mode is not None:
        resolved = parse_mode(mode, "mode")
    else:
        resolved = Mode.REPLAY if ci_locked else Mode.AUTO

    # A folder written in code is relative to the test's project (not to wherever the
    # run was started from); one from the environment is relative to the cwd, like
    # any path typed in a shell.
    base = test_root or project_root()
    if fixtures_dir is not None:
        root = Path(os.fspath(fixtures_dir))
        if not root.is_absolute():
            root = base / root
    elif env.get("VCR_FIXTURES_DIR"):
        root = Path.cwd() / env["VCR_FIXTURES_DIR"]
    else:
        root = base / "fixtures"

    lock_timeout = lock_timeout_from(env.get("VCR_LOCK_TIMEOUT"))
    flag("VCR_REPORT", default=True)  # a typo fails here, loudly; read at exit (summary_wanted)
    allowed_secrets()  # a bad pattern fails here, before any call; read again at each write
    rules_turned_off()
    return Settings(
        mode=resolved,
        fixtures_dir=root,
        forced=bool(env_mode) or flag("FORCE_VCR"),
        ci_locked=ci_locked,
        lock_timeout=lock_timeout,
    )


def fixtures_dir_setting() -> tuple[Path, str | None]:
    """The fixtures folder outside a test, as ``load_settings`` finds it, reading nothing
    else (a command that needs only the folder must not fail on a bad ``VCR_MODE``):
    ``VCR_FIXTURES_DIR`` (relative to the cwd), else ``fixtures/`` at the project root;
    with the variable that named it (None: the default)."""
    load_dotenv_once()
    value = os.environ.get("VCR_FIXTURES_DIR")
    if value:
        return Path.cwd() / value, "VCR_FIXTURES_DIR"
    return project_root() / "fixtures", None


def lock_timeout() -> float:
    """``VCR_LOCK_TIMEOUT`` alone (``lock_timeout_from``), for a command that takes locks."""
    load_dotenv_once()
    return lock_timeout_from(os.environ.get("VCR_LOCK_TIMEOUT"))


def rules_turned_off() -> tuple[str, ...]:
    """``VCR_DISABLE_RULES``: dehydrate rules to turn off, by name, comma-separated
    (``git_user,shell``); applied to the rules in force on every read."""
    names = tuple(
        name.strip() for name in os.environ.get("VCR_DISABLE_RULES", "").split(",") if name.strip()
    )
    try:
        disable_rules_from_environment(names)
    except ValueError as exc:
        raise ConfigError(f"{exc}. Fix or unset VCR_DISABLE_RULES.") from None
    return names


def is_active(settings: Settings | None = None) -> bool:
    """vcr_kit records and replays inside tests, or anywhere when forced on."""
    if CONFIG.active_tests:
        return True
    if settings is None:
        load_dotenv_once()
        return bool(os.environ.get("VCR_MODE")) or flag("FORCE_VCR")
    return settings.forced


def test_project_root(test_file: str | os.PathLike[str] | None) -> Path | None:
    """The project a test file belongs to (None when the file is unknown)."""
    if not test_file:
        return None
    return _project_root_of(os.fspath(Path(test_file).parent))


@lru_cache(maxsize=256)
def _project_root_of(folder: str) -> Path:
    return project_root(Path(folder))


@contextmanager
def activated(
    mode: str | Mode | None = None,
    fixtures_dir: str | os.PathLike[str] | None = None,
    root: Path | None = None,
) -> Iterator[None]:
    """Mark the time a test runs as one where vcr_kit is active, with its defaults;
    ``root`` is the test's project (its fixtures folder is found from there)."""
    if mode is not None:
        parse_mode(mode, "vcr_mode")  # fail at the start of the test, not at the first call
    folder = None if fixtures_dir is None else os.fspath(fixtures_dir)
    defaults: _TestDefaults = (mode, folder, root)
    with CONFIG.lock:
        CONFIG.active_tests += 1
        CONFIG.test_defaults.append(defaults)
    try:
        yield
    finally:
        with CONFIG.lock:
            CONFIG.active_tests -= 1
            CONFIG.test_defaults.remove(defaults)


# -- single variables, for the modules that need one ----------------------------------


def faults_from_environment() -> Spec:
    """``VCR_FAULTS``: faults for every request of the run (tests that set their own
    use theirs); a bad spec is a ``ConfigError`` naming the value."""
    return _faults_spec(os.environ.get("VCR_FAULTS", ""))


@lru_cache(maxsize=8)
def _faults_spec(text: str) -> Spec:
    # Asked on every request a seam sees: parsed once per value (a ConfigError is not
    # cached, so a bad value is refused each time).
    return parse_spec(text, "VCR_FAULTS")


def replay_mode_forced() -> bool:
    """``VCR_MODE=replay`` is set: it wins over ``VCR_RECORD``, so a miss says so."""
    return os.environ.get("VCR_MODE", "").strip().lower() == "replay"


def summary_wanted() -> bool:
    """``VCR_REPORT``: print the run summary at exit (default yes). Lenient: at exit a
    typo must not raise (``load_settings`` has refused it loudly already)."""
    try:
        return flag("VCR_REPORT", default=True)
    except ConfigError:
        return True


def mark_xdist_worker() -> None:
    """This process is a pytest-xdist worker (said by its pytest, which knows)."""
    CONFIG.xdist_worker_pid = os.getpid()


def in_xdist_worker() -> bool:
    """This process is a pytest-xdist worker (its controller prints the summary). A
    process started by a worker inherits ``PYTEST_XDIST_WORKER`` but is no worker:
    only the process the worker's pytest marked counts."""
    return bool(os.environ.get("PYTEST_XDIST_WORKER")) and CONFIG.xdist_worker_pid == os.getpid()


def pure_json_wanted() -> bool:
    """``VCR_PURE_JSON=1``: canonical JSON from the standard library, never orjson."""
    return os.environ.get("VCR_PURE_JSON", "") not in ("", "0")


def host_variables() -> tuple[str, str]:
    """(``ANTHROPIC_BASE_URL``, ``VCR_HOSTS``) as they are now, "" when unset."""
    env = os.environ
    return env.get("ANTHROPIC_BASE_URL", ""), env.get("VCR_HOSTS", "")


def cloud_base_urls() -> tuple[tuple[str, str], ...]:
    """(variable, URL) of each cloud client's base-URL variable that is set
    (``ANTHROPIC_BEDROCK_BASE_URL``, ``ANTHROPIC_VERTEX_BASE_URL``, ...)."""
    env = os.environ
    return tuple((name, env[name]) for name in BASE_URL_VARIABLES if env.get(name))


#: Every provider's base-URL variables (``OPENAI_BASE_URL``, ``GOOGLE_GEMINI_BASE_URL``).
_PROVIDER_BASE_URL_VARIABLES: Final = tuple(
    name for provider in PROVIDERS.values() for name in provider.base_url_variables
)


def provider_base_urls() -> tuple[tuple[str, str], ...]:
    """(variable, URL) of each provider's base-URL variable that is set."""
    env = os.environ
    return tuple((name, env[name]) for name in _PROVIDER_BASE_URL_VARIABLES if env.get(name))


#: The variable that tells Claude Code to use each cloud platform, by platform.
_CLAUDE_CODE_CLOUDS: Final = (
    ("bedrock", "CLAUDE_CODE_USE_BEDROCK"),
    ("vertex", "CLAUDE_CODE_USE_VERTEX"),
    ("foundry", "CLAUDE_CODE_USE_FOUNDRY"),
)


def claude_code_clouds() -> tuple[str, ...]:
    """The cloud platforms (``bedrock``, ``vertex``, ``foundry``) whose
    ``CLAUDE_CODE_USE_*`` variable is set: Claude Code then talks to that platform's
    base URL, not to ``ANTHROPIC_BASE_URL``."""
    # Claude Code's own reading of a yes: any other word is off, not an error.
    env = os.environ
    return tuple(
        name
        for name, variable in _CLAUDE_CODE_CLOUDS
        if env.get(variable, "").strip().lower() in _TRUE_WORDS
    )


def bedrock_upstream() -> tuple[str, str, str]:
    """(Bedrock's runtime URL, its control-plane URL, its region): both
    ``ANTHROPIC_BEDROCK_BASE_URL`` when set, else the region's ``bedrock-runtime`` and
    ``bedrock`` hosts; the region from ``AWS_REGION``/``AWS_DEFAULT_REGION``."""
    env = os.environ
    region = env.get("AWS_REGION") or env.get("AWS_DEFAULT_REGION") or "us-east-1"
    given = (env.get("ANTHROPIC_BEDROCK_BASE_URL") or "").rstrip("/")
    runtime = given or f"https://bedrock-runtime.{region}.amazonaws.com"
    return runtime, given or f"https://bedrock.{region}.amazonaws.com", region


def vertex_upstream() -> str:
    """``ANTHROPIC_VERTEX_BASE_URL`` (without a trailing slash), "" when unset: then each
    request goes to the host of the region in its own path."""
    return (os.environ.get("ANTHROPIC_VERTEX_BASE_URL") or "").rstrip("/")


def foundry_upstream() -> str:
    """Microsoft Foundry's base URL: ``ANTHROPIC_FOUNDRY_BASE_URL``, else the
    ``ANTHROPIC_FOUNDRY_RESOURCE``'s ``https://<resource>.services.ai.azure.com/anthropic``;
    "" when neither is set."""
    env = os.environ
    given = (env.get("ANTHROPIC_FOUNDRY_BASE_URL") or "").strip().rstrip("/")
    if given:
        return given
    resource = (env.get("ANTHROPIC_FOUNDRY_RESOURCE") or "").strip()
    return f"https://{resource}.services.ai.azure.com/anthropic" if resource else ""


def in_ci() -> bool:
    """``CI`` is set (to a word that is not off): the commands that call the live API
    (``drift``) refuse to run there unless asked."""
    return truthy(os.environ.get("CI"))


def base_url() -> str | None:
    """``ANTHROPIC_BASE_URL``: where the SDK (and so the proxy's upstream) sends requests."""
    return os.environ.get("ANTHROPIC_BASE_URL") or None


@contextmanager
def base_url_set_to(url: str) -> Iterator[None]:
    """``ANTHROPIC_BASE_URL`` is ``url`` while the block runs (child processes inherit
    it); the old value is back afterwards."""
    old = os.environ.get("ANTHROPIC_BASE_URL")
    os.environ["ANTHROPIC_BASE_URL"] = url
    try:
        yield
    finally:
        if old is None:
            os.environ.pop("ANTHROPIC_BASE_URL", None)
        else:
            os.environ["ANTHROPIC_BASE_URL"] = old


@contextmanager
def variables_set_to(values: Mapping[str, str]) -> Iterator[None]:
    """Each variable of ``values`` set while the block runs (child processes inherit
    them); the old values are back afterwards."""
    old = {name: os.environ.get(name) for name in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for name, value in old.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def run_id_variable() -> str:
    """``VCR_RUN_ID`` as set (by the user, or by the first process of this run)."""
    return os.environ.get("VCR_RUN_ID", "").strip()


def set_run_id(value: str) -> None:
    """Set ``VCR_RUN_ID`` in this process's environment, so its children join its run."""
    os.environ["VCR_RUN_ID"] = value


def in_tox() -> bool:
    """This process runs under tox (``TOX_ENV_NAME`` is set)."""
    return bool(os.environ.get("TOX_ENV_NAME"))


def run_complete_word() -> str:
    """``VCR_RUN_COMPLETE``, stripped and lower-cased ("" when unset)."""
    return os.environ.get("VCR_RUN_COMPLETE", "").strip().lower()


@dataclass(frozen=True)
class AllowedSecrets:
    """``VCR_ALLOW_SECRETS``: key-shaped strings that are known not to be secrets."""

    values: frozenset[bytes] = frozenset()
    patterns: tuple[re.Pattern[bytes], ...] = ()

    def allows(self, token: bytes) -> bool:
        """The whole of ``token`` is an allowed value or matches an allowed pattern."""
        return token in self.values or any(p.fullmatch(token) for p in self.patterns)


#: A newline, or a comma not inside a ``{m,n}`` repeat of a pattern.
_ALLOW_SEPARATOR: Final = re.compile(r"\n|,(?![^{}]*\})")


def allowed_secrets() -> AllowedSecrets:
    """``VCR_ALLOW_SECRETS``: entries separated by commas (or newlines); an entry is a
    literal value, or ``re:`` and a regular expression that must match the whole token
    (a comma inside its ``{m,n}`` separates nothing). Read on every write: a test may
    set it."""
    return _parse_allowed(os.environ.get("VCR_ALLOW_SECRETS", ""))


@lru_cache(maxsize=16)
def _parse_allowed(text: str) -> AllowedSecrets:
    values: set[bytes] = set()
    patterns: list[re.Pattern[bytes]] = []
    for entry in (e.strip() for e in _ALLOW_SEPARATOR.split(text)):
        if entry.startswith("re:"):
            try:
                patterns.append(re.compile(entry[3:].encode("utf-8")))
            except re.error as exc:
                raise ConfigError(
                    f"VCR_ALLOW_SECRETS: {entry!r} is not a valid regular expression "
                    f"({exc}). Fix the pattern, or give the value itself without 're:'."
                ) from None
        elif entry:
            values.add(entry.encode("utf-8"))
    return AllowedSecrets(frozenset(values), tuple(patterns))


def extra_pytest_args() -> str:
    """``PYTEST_ADDOPTS``: pytest's extra arguments, judged with the command line."""
    return os.environ.get("PYTEST_ADDOPTS", "")
