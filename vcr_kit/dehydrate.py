"""Dehydrate and hydrate: make recorded text independent of machine and time.

A fixture's name is a hash of the request, so anything in a request that differs
between machines or runs (the working directory, the config home, durations,
file counts) must be replaced by a placeholder *before* hashing, or every team
member would record their own copy. ``dehydrate`` does that; ``hydrate`` puts
this machine's values back when a fixture is replayed.

The rules are data (``DEFAULT_RULES``); users add their own with
``add_rule(Rule(...))`` or pass ``rules=`` to a call. Everything here is a plain
function on strings and JSON values: no disk, no global state but the user rule
list.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any, Final

__all__ = [
    "DEFAULT_RULES",
    "TOKEN_COUNT_RULES",
    "PathRule",
    "Rule",
    "WholeStringRule",
    "add_rule",
    "clear_rules",
    "config_home",
    "cwd_slug",
    "dehydrate",
    "dehydrate_json",
    "hydrate",
    "hydrate_json",
    "map_strings",
    "normalize_for_token_count",
    "user_rules",
]


#: Machine paths given explicitly, by rule name ("cwd", "config_home"); None: this machine's.
Paths = Mapping[str, "str | None"]
_NO_PATHS: Final[Paths] = {}


@dataclass(frozen=True)
class Rule:
    """Replace every match of ``pattern`` by ``replacement`` (``re.sub`` syntax).

    ``trigger`` is a literal that every match contains; strings without it skip the
    regex (most strings contain none of the patterns, so this keeps keys cheap).
    ``restore`` maps a placeholder back on hydrate, e.g. ``("[NUM]", "1")``.
    """

    name: str
    pattern: str
    replacement: str
    trigger: str = ""
    restore: tuple[str, str] | None = None
    flags: int = 0
    regex: re.Pattern[str] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "regex", re.compile(self.pattern, self.flags))

    def apply(self, s: str, paths: Paths = _NO_PATHS) -> str:
        if self.trigger and self.trigger not in s:
            return s
        return self.regex.sub(self.replacement, s)

    def restore_in(self, s: str, paths: Paths = _NO_PATHS) -> str:
        if self.restore is None:
            return s
        placeholder, value = self.restore
        return s.replace(placeholder, value)


@dataclass(frozen=True)
class WholeStringRule:
    """A string that contains ``marker`` anywhere is replaced whole by ``replacement``.

    The original uses this for "Files modified by user:", whose list of files is
    different on every machine and has no fixed end to match up to.
    """

    name: str
    marker: str
    replacement: str

    def apply(self, s: str, paths: Paths = _NO_PATHS) -> str:
        return self.replacement if self.marker in s else s

    def restore_in(self, s: str, paths: Paths = _NO_PATHS) -> str:
        return s


@dataclass(frozen=True)
class PathRule:
    """Replace a machine path (found at call time by ``resolve``) by ``placeholder``.

    Windows paths appear in three spellings (``C:\\Users\\p``, ``C:/Users/p`` and,
    inside JSON text, ``C:\\\\Users\\\\p``); all three are replaced. Slashes in
    general are left alone: turning every ``/`` into ``\\`` would break
    ``</system-reminder>``-style tags. A match must end at a path boundary, so
    ``/work/app`` does not eat the start of ``/work/apple``.
    """

    name: str
    placeholder: str
    resolve: Callable[[], str]

    def path(self, paths: Paths) -> str:
        """The path to replace: given in ``paths`` under the rule's name, else resolved now."""
        given = paths.get(self.name)
        return self.resolve() if given is None else given

    def apply(self, s: str, paths: Paths = _NO_PATHS) -> str:
        regex = _path_regex(self.path(paths))
        if regex is None:
            return s
        return regex.sub(self.placeholder.replace("\\", "\\\\"), s)

    def restore_in(self, s: str, paths: Paths = _NO_PATHS) -> str:
        if self.placeholder not in s:
            return s
        return s.replace(self.placeholder, self.path(paths))


AnyRule = Rule | WholeStringRule | PathRule

# Paths shorter than this ("/", "C:\") would match inside ordinary text.
_MIN_PATH_LENGTH: Final = 4


@lru_cache(maxsize=64)
def _path_regex(path: str) -> re.Pattern[str] | None:
    path = path.rstrip("/\\") if len(path) > 3 else path
    if len(path) < _MIN_PATH_LENGTH:
        return None
    spellings = {path, path.replace("\\", "/"), path.replace("\\", "\\\\")}
    alternatives = []
    for spelling in sorted(spellings, key=len, reverse=True):
        escaped = re.escape(spelling)
        # Windows drive letters are case-insensitive: c:\ and C:\ are the same place.
        if re.match(r"[A-Za-z]:", spelling):
            escaped = f"[{spelling[0].lower()}{spelling[0].upper()}]" + escaped[1:]
        alternatives.append(escaped)
    # A drive letter right after the path starts another Windows path, so it is a
    # boundary too: otherwise in `C:\pC:\p` only the second copy would be replaced,
    # uncovering the first, and dehydrate would not be idempotent.
    return re.compile("(?:" + "|".join(alternatives) + r")(?!(?![A-Za-z]:[\\/])[A-Za-z0-9_\-])")


def config_home() -> str:
    """The agent config home: ``$CLAUDE_CONFIG_DIR``, else ``~/.claude``."""
    return os.environ.get("CLAUDE_CONFIG_DIR") or str(Path.home() / ".claude")


def cwd_slug(cwd: str | None = None) -> str:
    """The cwd as a one-segment slug (``/home/u/proj`` -> ``-home-u-proj``)."""
    return re.sub(r"[^A-Za-z0-9]", "-", os.getcwd() if cwd is None else cwd)


CONFIG_HOME_RULE: Final = PathRule("config_home", "[CONFIG_HOME]", config_home)
CWD_RULE: Final = PathRule("cwd", "[CWD]", os.getcwd)

#: The original's rules, in the original's order. The config home goes before the
#: cwd because it is usually the longer, more specific path.
DEFAULT_RULES: Final[tuple[AnyRule, ...]] = (
    WholeStringRule("files_modified", "Files modified by user:", "Files modified by user: [FILES]"),
    Rule("num_files", r'num_files="\d+"', 'num_files="[NUM]"', "num_files=", ("[NUM]", "1")),
    Rule(
        "duration_ms",
        r'duration_ms="\d+"',
        'duration_ms="[DURATION]"',
        "duration_ms=",
        ("[DURATION]", "100"),
    ),
    # The original matches integers only; costs are decimals, so we take both.
    Rule("cost_usd", r'cost_usd="\d+(?:\.\d+)?"', 'cost_usd="[COST]"', "cost_usd="),
    CONFIG_HOME_RULE,
    CWD_RULE,
    Rule(
        "available_commands",
        r"Available commands:.+",
        "Available commands: [COMMANDS]",
        "Available commands:",
    ),
)

_UUID: Final = r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"
_TIMESTAMP: Final = r"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:?\d{2})?"

#: Extra rules of the token-count key: ids and clocks differ on every run.
TOKEN_COUNT_RULES: Final[tuple[Rule, ...]] = (
    Rule("uuid", _UUID, "[UUID]", "-"),
    Rule("timestamp", _TIMESTAMP, "[TIMESTAMP]", ":"),
)

_user_rules: list[AnyRule] = []


def add_rule(rule: AnyRule) -> None:
    """Add a rule that every later ``dehydrate``/``hydrate`` applies after the defaults."""
    if not isinstance(rule, (Rule, WholeStringRule, PathRule)):
        raise TypeError(f"add_rule() takes a Rule, WholeStringRule or PathRule, not {rule!r}")
    _user_rules.append(rule)


def clear_rules() -> None:
    """Remove every rule added with ``add_rule``."""
    _user_rules.clear()


def user_rules() -> tuple[AnyRule, ...]:
    return tuple(_user_rules)


def _active_rules(rules: Sequence[AnyRule] | None) -> Iterable[AnyRule]:
    if rules is not None:
        return rules
    if _user_rules:
        return (*DEFAULT_RULES, *_user_rules)
    return DEFAULT_RULES


def _paths(cwd: str | None, home: str | None) -> Paths:
    return {"cwd": cwd, "config_home": home}


def dehydrate(
    s: str,
    *,
    cwd: str | None = None,
    config_home: str | None = None,
    rules: Sequence[AnyRule] | None = None,
) -> str:
    """Replace machine- and run-specific parts of ``s`` by placeholders.

    ``cwd`` and ``config_home`` default to this machine's; pass them to dehydrate
    text from elsewhere (tests use Windows paths on Linux this way).
    """
    paths = _paths(cwd, config_home)
    for rule in _active_rules(rules):
        s = rule.apply(s, paths)
    return s


def hydrate(
    s: str,
    *,
    cwd: str | None = None,
    config_home: str | None = None,
    rules: Sequence[AnyRule] | None = None,
) -> str:
    """Put this machine's values back in place of the placeholders ``dehydrate`` left."""
    if "[" not in s:  # every placeholder has a bracket: the common case costs one scan
        return s
    paths = _paths(cwd, config_home)
    for rule in _active_rules(rules):
        s = rule.restore_in(s, paths)
    return s


def normalize_for_token_count(
    s: str, *, cwd: str | None = None, config_home: str | None = None
) -> str:
    """The deeper normalisation of the token-count key: also cwd slug, UUIDs, timestamps."""
    s = dehydrate(s, cwd=cwd, config_home=config_home)
    slug = cwd_slug(cwd)
    if len(slug) >= _MIN_PATH_LENGTH:
        s = s.replace(slug, "[CWD_SLUG]")
    for rule in TOKEN_COUNT_RULES:
        s = rule.apply(s)
    return s


def map_strings(value: Any, fn: Callable[[str], str]) -> Any:
    """Apply ``fn`` to every string inside a JSON value (dict keys are left alone)."""
    if isinstance(value, str):
        return fn(value)
    if isinstance(value, dict):
        return {k: map_strings(v, fn) for k, v in value.items()}
    if isinstance(value, list):
        return [map_strings(v, fn) for v in value]
    return value


def dehydrate_json(value: Any, **options: Any) -> Any:
    """``dehydrate`` every string inside a JSON value."""
    return map_strings(value, lambda s: dehydrate(s, **options))


def hydrate_json(value: Any, **options: Any) -> Any:
    """``hydrate`` every string inside a JSON value."""
    return map_strings(value, lambda s: hydrate(s, **options))
