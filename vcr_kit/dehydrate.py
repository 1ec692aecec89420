"""Dehydrate and hydrate: make recorded text independent of machine and time.

A fixture's name is a hash of the request, so anything in a request that differs
between machines or runs (the working directory, the config home, durations,
file counts) must be replaced by a placeholder *before* hashing, or every team
member would record their own copy. ``dehydrate`` does that; ``hydrate`` puts
this machine's values back when a fixture is replayed.

The rules are data (``DEFAULT_RULES``); users add their own with
``add_rule(Rule(...))`` or pass ``rules=`` to a call. Everything here is a plain
function on strings and JSON values: no disk, no global state but the rules chosen
(``RULE_STATE``: those added, those turned off). Every public function takes the same
keyword-only options (``cwd``, ``config_home``, ``rules``), spelled out in each
signature so that each one reads whole in ``help()``.
"""

from __future__ import annotations

import os
import re
import tempfile
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any, Final

__all__ = [
    "CLAUDE_CODE_RULES",
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
    "disable_rule",
    "disable_rules_from_environment",
    "disabled_rules",
    "enable_rule",
    "fewest_literals",
    "hydrate",
    "hydrate_json",
    "json_text_may_change",
    "map_strings",
    "normalize_for_token_count",
    "placeholders",
    "rules_in_force",
    "user_rules",
]


#: Machine paths given explicitly, by rule name ("cwd", "config_home"); None: this machine's.
Paths = Mapping[str, "str | None"]
_NO_PATHS: Final[Paths] = {}


@dataclass(frozen=True, eq=False)  # identity hash: rule tuples key caches on the hot path
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


@dataclass(frozen=True, eq=False)  # identity hash: rule tuples key caches on the hot path
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


@dataclass(frozen=True, eq=False)  # identity hash: rule tuples key caches on the hot path
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
    #: A match must also start a path (``/tmp`` is not replaced inside ``/var/tmp``):
    #: for short, common folders.
    starts_a_path: bool = False

    def path(self, paths: Paths) -> str:
        """The path to replace: given in ``paths`` under the rule's name, else resolved now."""
        given = paths.get(self.name)
        return self.resolve() if given is None else given

    def apply(self, s: str, paths: Paths = _NO_PATHS) -> str:
        compiled = _path_regex(self.path(paths), self.starts_a_path)
        if compiled is None:
            return s
        regex, literals = compiled
        if not any(literal in s for literal in literals):
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
def _path_regex(
    path: str, starts_a_path: bool = False
) -> tuple[re.Pattern[str], tuple[str, ...]] | None:
    """The regex matching ``path`` in its three spellings, and literals for a quick reject."""
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
    start = r"(?<![A-Za-z0-9_.\-/\\])" if starts_a_path else ""
    regex = re.compile(
        start + "(?:" + "|".join(alternatives) + r")(?!(?![A-Za-z]:[\\/])[A-Za-z0-9_\-])"
    )
    # Every match contains one of these (the drive letter is left out, its case varies).
    literals = tuple(
        sorted({spelling[2:] if spelling[1:2] == ":" else spelling for spelling in spellings})
    )
    return regex, literals


def config_home() -> str:
    """The agent config home: ``$CLAUDE_CONFIG_DIR``, else ``~/.claude``."""
    return os.environ.get("CLAUDE_CONFIG_DIR") or _default_config_home(os.environ.get("HOME"))


@lru_cache(maxsize=8)
def _default_config_home(home: str | None) -> str:
    # Cached per $HOME: this runs for every key and every replay.
    return str(Path.home() / ".claude")


def cwd_slug(cwd: str | None = None) -> str:
    """The cwd as a one-segment slug (``/home/u/proj`` -> ``-home-u-proj``)."""
    return _slug(os.getcwd() if cwd is None else cwd)


@lru_cache(maxsize=8)
def _slug(path: str) -> str:
    # Cached per folder: this runs for every key and every replay.
    return re.sub(r"[^A-Za-z0-9]", "-", path)


CONFIG_HOME_RULE: Final = PathRule("config_home", "[CONFIG_HOME]", config_home)
CWD_RULE: Final = PathRule("cwd", "[CWD]", os.getcwd)
#: Claude Code keeps a project's memory in ``<config home>/projects/<cwd slug>/``.
CWD_SLUG_RULE: Final = PathRule("cwd_slug", "[CWD_SLUG]", cwd_slug)

def home_dir() -> str:
    """This user's home folder (``$HOME``)."""
    return _home_of(os.environ.get("HOME"))


@lru_cache(maxsize=8)
def _home_of(home: str | None) -> str:
    # Cached per $HOME (``expanduser`` reads it, or the password database without it).
    return os.path.expanduser("~")


def temp_dir() -> str:
    """The temporary folder (``$TMPDIR``, else the system's)."""
    return tempfile.gettempdir()


_UUID: Final = r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"

#: Claude Code's git status block, in every request made in a git repository (in the
#: system prompt after "gitStatus: " up to 2.1.2xx, in the first message after
#: "# gitStatus" since). Each rule runs only on a string that holds the block's own
#: words, so a "Git user:" line elsewhere is left alone.
_GIT_STATUS: Final = "This is the git status at the start of the conversation"

#: What Claude Code says about the machine, the repository, the user and the moment,
#: which the default rules above do not already cover; found by recording one prompt
#: in two repositories (other branch, git user, commits, status, path depth, HOME, TZ,
#: SHELL) and diffing the requests. No restore for the git and environment lines: the
#: client never reads them back, and which branch or shell would be right? The home and
#: temp folders are restored, like the cwd: a path to them may come back in a tool call.
CLAUDE_CODE_RULES: Final[tuple[AnyRule, ...]] = (
    Rule("git_branch", r"(?m)^(Current branch: ).*$", r"\1[GIT_BRANCH]", _GIT_STATUS),
    Rule(
        "git_main_branch",
        r"(?m)^(Main branch \(you will usually use this for PRs\): ).*$",
        r"\1[GIT_MAIN_BRANCH]",
        _GIT_STATUS,
    ),
    Rule("git_user", r"(?m)^(Git user: ).*$", r"\1[GIT_USER]", _GIT_STATUS),
    # The lines of `git status --short` (or "(clean)"), up to the blank line.
    Rule("git_status_lines", r"(?m)^(Status:)(?:\n.+)+", "\\1\n[GIT_STATUS]", _GIT_STATUS),
    Rule(
        "git_commits",
        r"(?m)^(Recent commits:)(?:\n[0-9a-f]{7,40} .*)+",
        "\\1\n[GIT_COMMITS]",
        _GIT_STATUS,
    ),
    # The environment block: ` - Platform: linux` (2.x) or `Platform: darwin` (1.x).
    Rule("platform", r"(?m)^((?: - )?Platform: )[a-z0-9]+$", r"\1[PLATFORM]", "Platform: "),
    # 2.1.3xx adds the login shell when it is not the one the Bash tool runs.
    Rule(
        "shell",
        r"(?m)^((?: - )?Shell: )[A-Za-z0-9_./-]+(?: \(login shell: [A-Za-z0-9_./-]+\))?$",
        r"\1[SHELL]",
        "Shell: ",
    ),
    Rule(
        "model_announcement",
        r"(You are powered by the model named )[^\n]*",
        r"\1[MODEL_ANNOUNCEMENT]",
        "You are powered by the model named ",
    ),
    # A subagent's result (the Agent tool): a random id, and what it took.
    Rule(
        "agent_id",
        r"(?<=agentId: )[0-9a-f]{8,}|(?<=to: ')[0-9a-f]{8,}(?=')",
        "[AGENT_ID]",
        "agentId: ",
    ),
    # Its usage: `subagent_tokens: N` lines (2.1.1xx), `<subagent_tokens>N</...>` (2.1.3xx).
    Rule(
        "agent_tokens",
        r"(subagent_tokens: |<subagent_tokens>)\d+",
        r"\1[TOKENS]",
        "subagent_tokens",
    ),
    # 2.1.3xx runs it in the background: its output file is named by session and agent,
    # and a notification quotes its id when it ends.
    Rule("agent_task_id", r"(<task-id>)[0-9a-f]{8,}(</task-id>)", r"\1[AGENT_ID]\2", "<task-id>"),
    Rule(
        "agent_output_file",
        _UUID + r"/tasks/[0-9a-f]{8,}\.output",
        "[SESSION]/tasks/[AGENT_ID].output",
        "/tasks/",
    ),
    Rule(
        "agent_duration_ms",
        r"(?m)(^duration_ms: |<duration_ms>)\d+",
        r"\1[DURATION]",
        "duration_ms",
    ),
    PathRule("home", "[HOME]", home_dir, starts_a_path=True),
    PathRule("temp_dir", "[TMPDIR]", temp_dir, starts_a_path=True),
)

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
    # Claude Code's environment block (the system prompt and a reminder in the first
    # message) also names the day and the kernel: a run recorded on one machine on one
    # day must replay on another. No restore: which day or kernel would be right?
    CWD_SLUG_RULE,
    Rule(
        "current_date",
        r"(Today's date(?: is|:) )\d{4}-\d{2}-\d{2}",
        r"\1[DATE]",
        "Today's date",
    ),
    Rule("os_version", r"OS Version: [^\n]*", "OS Version: [OS_VERSION]", "OS Version: "),
    *CLAUDE_CODE_RULES,
)

_TIMESTAMP: Final = r"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:?\d{2})?"

#: Extra rules of the token-count key: ids and clocks differ on every run.
TOKEN_COUNT_RULES: Final[tuple[Rule, ...]] = (
    Rule("uuid", _UUID, "[UUID]", "-"),
    Rule("timestamp", _TIMESTAMP, "[TIMESTAMP]", ":"),
)

RulesInForce = tuple[tuple[AnyRule, ...], tuple[tuple[str, str], ...]]


class RuleState:
    """The rules chosen for this process beyond the defaults: those added, those turned
    off, and the last ``rules_in_force`` of the default rules."""

    __slots__ = ("default_in_force", "disabled", "disabled_by_environment", "user_rules")

    #: Added with ``add_rule``, applied after the defaults.
    user_rules: list[AnyRule]
    #: Names of rules turned off with ``disable_rule``.
    disabled: set[str]
    #: Names of rules ``VCR_DISABLE_RULES`` turns off (set by the settings).
    disabled_by_environment: set[str]
    #: What the default rules' paths came from (cwd, ``$HOME``, ``$CLAUDE_CONFIG_DIR``,
    #: ``tempfile.tempdir``) and the ``rules_in_force`` made from them; None until asked.
    default_in_force: tuple[tuple[str | None, ...], RulesInForce] | None

    def __init__(self) -> None:
        self.user_rules = []
        self.disabled = set()
        self.disabled_by_environment = set()
        self.default_in_force = None

    def reset(self) -> None:
        """The default rules only, all on (vcr_kit's own tests start from here)."""
        self.user_rules.clear()
        self.disabled.clear()
        self.disabled_by_environment.clear()
        self.default_in_force = None


RULE_STATE: Final = RuleState()

def add_rule(rule: AnyRule) -> None:
    """Add a rule that every later ``dehydrate``/``hydrate`` applies after the defaults."""
    if not isinstance(rule, (Rule, WholeStringRule, PathRule)):
        raise TypeError(f"add_rule() takes a Rule, WholeStringRule or PathRule, not {rule!r}")
    RULE_STATE.user_rules.append(rule)


def clear_rules() -> None:
    """Remove every rule added with ``add_rule``."""
    RULE_STATE.user_rules.clear()


def user_rules() -> tuple[AnyRule, ...]:
    return tuple(RULE_STATE.user_rules)


def disable_rule(name: str) -> None:
    """Turn off the rule called ``name`` (a default one or one added) for every later
    ``dehydrate``/``hydrate``; ``enable_rule(name)`` turns it back on. Fixtures keyed
    with it on need ``vcr_kit rekey`` (or a re-record) to be found again."""
    _check_rule_name(name, "disable_rule()")
    RULE_STATE.disabled.add(name)


def disable_rules_from_environment(names: Iterable[str]) -> None:
    """The rules ``VCR_DISABLE_RULES`` turns off (read by the settings), replacing the
    previous list: the variable may change between tests. ``ValueError`` names an
    unknown rule."""
    names = tuple(names)
    for name in names:
        _check_rule_name(name, "VCR_DISABLE_RULES")
    RULE_STATE.disabled_by_environment.clear()
    RULE_STATE.disabled_by_environment.update(names)


def _check_rule_name(name: str, source: str) -> None:
    known = {rule.name for rule in (*DEFAULT_RULES, *RULE_STATE.user_rules)}
    if name not in known:
        raise ValueError(
            f"{source}: no rule is named {name!r}; the rules are: {', '.join(sorted(known))}"
        )


def enable_rule(name: str) -> None:
    """Turn back on a rule that ``disable_rule`` turned off (nothing if it is on)."""
    RULE_STATE.disabled.discard(name)


def disabled_rules() -> tuple[str, ...]:
    """The names of the rules turned off (in code or by ``VCR_DISABLE_RULES``), sorted."""
    return tuple(sorted(RULE_STATE.disabled | RULE_STATE.disabled_by_environment))


def _active_rules(rules: Sequence[AnyRule] | None) -> Iterable[AnyRule]:
    if rules is not None:
        return rules
    state = RULE_STATE
    if state.disabled or state.disabled_by_environment:
        off = state.disabled | state.disabled_by_environment
        return tuple(r for r in (*DEFAULT_RULES, *state.user_rules) if r.name not in off)
    if state.user_rules:
        return (*DEFAULT_RULES, *state.user_rules)
    return DEFAULT_RULES


def _resolve_paths(rules: Iterable[AnyRule], cwd: str | None, home: str | None) -> dict[str, str]:
    """Every path rule's path, resolved once per call (``Path.home()`` is not free)."""
    given: dict[str, str | None] = {
        "cwd": cwd,
        "config_home": home,
        "cwd_slug": None if cwd is None else cwd_slug(cwd),
    }
    return {rule.name: rule.path(given) for rule in _path_rules(tuple(rules))}


@lru_cache(maxsize=32)
def _path_rules(rules: tuple[AnyRule, ...]) -> tuple[PathRule, ...]:
    # Picked out once per set of rules: this runs for every key and every replay.
    return tuple(rule for rule in rules if isinstance(rule, PathRule))


def _prepared(
    rules: Sequence[AnyRule] | None, cwd: str | None, home: str | None
) -> tuple[tuple[AnyRule, ...], dict[str, str]]:
    """The rules in force and their paths, resolved once for a whole call."""
    active = tuple(_active_rules(rules))
    return active, _resolve_paths(active, cwd, home)




def rules_in_force() -> RulesInForce:
    """The rules a ``dehydrate`` now would apply and the paths it would replace: equal
    values mean equal results, so a result may be kept while this stays equal.

    Runs on every replay. The default rules' paths come from the cwd, ``$HOME``,
    ``$CLAUDE_CONFIG_DIR`` and the temporary folder ``tempfile`` chose, and nothing
    else: while those stay the same, the same value (the same object) is given again
    without resolving them. Other rules' paths are resolved every time (a user's rule
    may find its path anywhere)."""
    if _active_rules(None) is not DEFAULT_RULES:
        active, paths = _prepared(None, None, None)
        return active, tuple(paths.items())
    inputs = (
        os.getcwd(),
        os.environ.get("HOME"),
        os.environ.get("CLAUDE_CONFIG_DIR"),
        tempfile.tempdir,
    )
    kept = RULE_STATE.default_in_force
    if kept is not None and kept[0] == inputs:
        return kept[1]
    active, paths = _prepared(None, None, None)
    in_force = (active, tuple(paths.items()))
    if tempfile.tempdir == inputs[3]:  # not chosen by this very call (then key on it next)
        RULE_STATE.default_in_force = (inputs, in_force)
    return in_force


def _in_force(
    rules: Sequence[AnyRule] | None, cwd: str | None, home: str | None
) -> RulesInForce:
    """The rules of a call given ``rules``, ``cwd`` and ``home``, and their paths: with
    none of them given, ``rules_in_force``'s (the default rules' paths kept while the
    cwd, ``$HOME`` and the rest stay the same), else resolved now."""
    if rules is None and cwd is None and home is None:
        return rules_in_force()
    active, paths = _prepared(rules, cwd, home)
    return active, tuple(paths.items())


def _dehydrate_with(
    s: str, rules: tuple[AnyRule, ...], paths: Paths, gate: re.Pattern[str] | None
) -> str:
    """``dehydrate`` of ``s`` by ``rules`` with ``paths``; ``gate``: their ``_gate``."""
    if gate is not None and not gate.search(s):
        return s  # the common case: one regex scan instead of one per rule
    for rule in rules:
        s = rule.apply(s, paths)
    return s


@lru_cache(maxsize=32)
def _gate(
    rules: tuple[AnyRule, ...], path_items: tuple[tuple[str, str], ...]
) -> re.Pattern[str] | None:
    """A regex that matches every string that some rule could change, or None when a
    rule has no literal to look for (then every string goes through every rule)."""
    literals = _gate_literals(rules, path_items)
    return None if literals is None else _alternation(fewest_literals(literals))


def fewest_literals(literals: Iterable[str]) -> tuple[str, ...]:
    """The fewest literals whose presence says the same as ``literals``: each once, and
    none that holds another (a text holding ``duration_ms=`` holds ``duration_ms``).
    Many rules share a trigger (the git rules) or hold another's (a config home under
    the home folder): a text is searched once per literal, so each one dropped is a
    pass over the request saved. Longest first: the alternation then prefers them."""
    unique = sorted(set(literals), key=lambda literal: (-len(literal), literal))
    return tuple(
        literal
        for literal in unique
        if not any(other != literal and other in literal for other in unique)
    )


def _gate_literals(
    rules: tuple[AnyRule, ...], path_items: tuple[tuple[str, str], ...]
) -> tuple[str, ...] | None:
    paths = dict(path_items)
    literals: list[str] = []
    for rule in rules:
        if isinstance(rule, WholeStringRule):
            literals.append(rule.marker)
        elif isinstance(rule, Rule):
            if not rule.trigger:
                return None
            literals.append(rule.trigger)
        else:
            compiled = _path_regex(rule.path(paths))
            if compiled is not None:
                literals.extend(compiled[1])
    return tuple(literals)


def _alternation(literals: tuple[str, ...]) -> re.Pattern[str] | None:
    return re.compile("|".join(re.escape(literal) for literal in literals)) if literals else None


def _hydrate_with(s: str, rules: tuple[AnyRule, ...], paths: Paths) -> str:
    if "[" not in s:  # every placeholder has a bracket: the common case costs one scan
        return s
    for rule in rules:
        s = rule.restore_in(s, paths)
    return s


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
    active, path_items = _in_force(rules, cwd, config_home)
    return _dehydrate_with(s, active, dict(path_items), _gate(active, path_items))


def hydrate(
    s: str,
    *,
    cwd: str | None = None,
    config_home: str | None = None,
    rules: Sequence[AnyRule] | None = None,
) -> str:
    """Put this machine's values back in place of the placeholders ``dehydrate`` left."""
    if "[" not in s:
        return s
    return _hydrate_with(s, *_prepared(rules, cwd, config_home))


def placeholders(rules: Sequence[AnyRule] | None = None) -> tuple[str, ...]:
    """Every placeholder that ``hydrate`` replaces (so replay can skip texts without any)."""
    return _placeholders(tuple(_active_rules(rules)))


@lru_cache(maxsize=32)
def _placeholders(rules: tuple[AnyRule, ...]) -> tuple[str, ...]:
    found: list[str] = []
    for rule in rules:
        if isinstance(rule, PathRule):
            found.append(rule.placeholder)
        elif isinstance(rule, Rule) and rule.restore is not None:
            found.append(rule.restore[0])
    return tuple(found)


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


def json_text_may_change(
    text: str,
    *,
    cwd: str | None = None,
    config_home: str | None = None,
    rules: Sequence[AnyRule] | None = None,
) -> bool:
    """Whether ``dehydrate_json`` could change the JSON document whose text is ``text``.

    A few substring searches of the text instead of a walk over every string: a
    request carries the whole conversation, and most contain none of the patterns.
    False only when that is certain: every rule has a literal to look for, and each
    literal is printable ASCII without quote or backslash, which JSON writers put in
    the text as it is. The one exception, ``/`` written as ``\\/`` by some writers,
    sends the text down the walk.
    """
    literals = _text_literals(*_in_force(rules, cwd, config_home))
    if literals is None or "\\/" in text:
        return True
    # `in` per literal, not one alternation regex: on a long text, a handful of C
    # substring searches beat the regex engine trying every literal at every position.
    return any(literal in text for literal in literals)


@lru_cache(maxsize=32)
def _text_literals(
    rules: tuple[AnyRule, ...], path_items: tuple[tuple[str, str], ...]
) -> tuple[str, ...] | None:
    literals = _gate_literals(rules, path_items)
    if literals is None or not all(_JSON_INERT.fullmatch(literal) for literal in literals):
        return None
    return fewest_literals(literals)


# Characters that JSON writes as they are: no quote, backslash, control or non-ASCII.
_JSON_INERT: Final = re.compile(r"[\x20-\x21\x23-\x5b\x5d-\x7e]*")


def dehydrate_json(
    value: Any,
    *,
    cwd: str | None = None,
    config_home: str | None = None,
    rules: Sequence[AnyRule] | None = None,
) -> Any:
    """``dehydrate`` every string inside a JSON value."""
    active, path_items = _in_force(rules, cwd, config_home)
    paths = dict(path_items)
    gate = _gate(active, path_items)  # once for the whole value, not per string
    return map_strings(value, lambda s: _dehydrate_with(s, active, paths, gate))


def hydrate_json(
    value: Any,
    *,
    cwd: str | None = None,
    config_home: str | None = None,
    rules: Sequence[AnyRule] | None = None,
) -> Any:
    """``hydrate`` every string inside a JSON value."""
    active = tuple(_active_rules(rules))
    resolved: Paths | None = None  # resolved on the first placeholder: most replays have none

    def hydrate_one(s: str) -> str:
        nonlocal resolved
        if "[" not in s:
            return s
        if resolved is None:
            resolved = _resolve_paths(active, cwd, config_home)
        return _hydrate_with(s, active, resolved)

    return map_strings(value, hydrate_one)
