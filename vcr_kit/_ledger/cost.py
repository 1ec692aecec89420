"""Session cost: every response, live or replayed, adds its usage and USD cost.

Replays count exactly as live calls do (the original's
``addCachedCostToTotalSessionCost``), so code that tracks spend can be tested
offline. An unknown model counts its tokens and warns once; it never fails.
"""

from __future__ import annotations

import contextvars
import dataclasses
import threading
import warnings
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Final

from .._core.stream_message import apply_message_delta, start_snapshot
from .prices import BATCH_RATE, PRICES, Price, base_model_id
from .provider_prices import provider_base_model_id, provider_price

__all__ = [
    "ModelCost",
    "PricedUsage",
    "SessionCost",
    "UnknownModelPriceWarning",
    "add_priced",
    "add_usage",
    "cost_of",
    "price_for",
    "priced_usage",
    "prices_state",
    "reset_session_cost",
    "session_cost",
    "set_price",
    "usage_entries",
]


class UnknownModelPriceWarning(UserWarning):
    """A response named a model (or a rate) that the price table does not have."""


@dataclass(frozen=True)
class ModelCost:
    """Tokens by kind and USD for one model (or, in ``SessionCost``, for all)."""

    calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cache_write_5m_tokens: int = 0
    cache_write_1h_tokens: int = 0
    cache_read_tokens: int = 0
    usd: float = 0.0

    @property
    def cache_write_tokens(self) -> int:
        return self.cache_write_5m_tokens + self.cache_write_1h_tokens

    def __add__(self, other: ModelCost) -> ModelCost:
        # Spelled out: this runs on every replay, and a loop over getattr costs 3x more.
        return ModelCost(
            self.calls + other.calls,
            self.input_tokens + other.input_tokens,
            self.output_tokens + other.output_tokens,
            self.cache_write_5m_tokens + other.cache_write_5m_tokens,
            self.cache_write_1h_tokens + other.cache_write_1h_tokens,
            self.cache_read_tokens + other.cache_read_tokens,
            self.usd + other.usd,
        )


_FIELDS = (
    "calls",
    "input_tokens",
    "output_tokens",
    "cache_write_5m_tokens",
    "cache_write_1h_tokens",
    "cache_read_tokens",
    "usd",
)


@dataclass(frozen=True)
class SessionCost(ModelCost):
    by_model: Mapping[str, ModelCost] = field(default_factory=dict)


@dataclass(eq=False)
class CostLedger:
    """The session's cost and the prices it is counted at: one instance, ``COST``.
    Its fields change only under its ``lock`` (``warned`` excepted: a warning said
    twice by two threads at once does no harm)."""

    lock: threading.Lock = field(default_factory=threading.Lock)
    #: The session's cost per model, replays in ``pending`` not yet added.
    by_model: dict[str, ModelCost] = field(default_factory=dict)
    #: Replays counted and not yet added up: ``id`` of a kept ``PricedUsage`` -> [it,
    #: how many times]. A replay only counts (a new ``ModelCost`` per model and replay
    #: cost more than the rest of its note); ``session_cost`` adds them up when asked.
    pending: dict[int, list[Any]] = field(default_factory=dict)
    #: Prices set by ``set_price`` (base model id -> price), over the table's.
    overrides: dict[str, Price] = field(default_factory=dict)
    #: Moved by every ``set_price`` (and ``reset``); never back (``prices_state``).
    prices_version: int = 0
    #: The unknown models (and rates) warned about, each once.
    warned: set[str] = field(default_factory=set)

    def reset(self) -> None:
        """Forget the session's cost, the prices set and the warnings given (for
        tests). ``prices_version`` moves on, never back: a cost kept from before the
        reset was priced under a state the price table is no longer in."""
        with self.lock:
            self.by_model = {}
            self.pending = {}
            self.overrides = {}
            self.warned = set()
            self.prices_version += 1


COST = CostLedger()


def set_price(model: str, price: Price) -> None:
    """Add or override the price of a model id (dated ids resolve to their base id)."""
    with COST.lock:
        COST.overrides[base_model_id(model)] = price
        COST.prices_version += 1


def prices_state() -> tuple[int, int]:
    """Equal while the price table is the same: a cost priced under one state may be
    kept and counted again while this stays equal. (The overrides' count is in it too,
    so that clearing them, as a test's clean-up does, also changes it.)"""
    return COST.prices_version, len(COST.overrides)


def price_for(model: str, provider: str | None = None) -> Price | None:
    """The price of ``model``: Anthropic's table, or ``provider``'s (``"openai"``,
    ``"gemini"``: ``provider_prices``) when the usage entry names one. A price set by
    ``set_price`` wins either way."""
    if provider is None:
        base = base_model_id(model)
        return COST.overrides.get(base) or PRICES.get(base)
    base = provider_base_model_id(provider, model)
    return COST.overrides.get(base) or provider_price(provider, model)


def _int(usage: Mapping[str, Any], key: str) -> int:
    value = usage.get(key)
    return value if isinstance(value, int) else 0


def tokens_of(usage: Mapping[str, Any]) -> ModelCost:
    """Split a wire ``usage`` object into token counts (cost not yet applied)."""
    written = _int(usage, "cache_creation_input_tokens")
    split = usage.get("cache_creation")
    if isinstance(split, Mapping) and split:
        write_5m = _int(split, "ephemeral_5m_input_tokens")
        write_1h = _int(split, "ephemeral_1h_input_tokens")
    else:  # no split reported: the API's default cache lifetime is 5 minutes
        write_5m, write_1h = written, 0
    return ModelCost(
        calls=1,
        input_tokens=_int(usage, "input_tokens"),
        output_tokens=_int(usage, "output_tokens"),
        cache_write_5m_tokens=write_5m,
        cache_write_1h_tokens=write_1h,
        cache_read_tokens=_int(usage, "cache_read_input_tokens"),
    )


def _warn_once(key: str, message: str) -> None:
    if key in COST.warned:
        return
    COST.warned.add(key)
    warnings.warn(message, UnknownModelPriceWarning, stacklevel=4)


#: The cache-write kinds as a warning names them: Anthropic's 5-minute and 1-hour
#: writes sit in the same two slots as OpenAI's 30-minute and 12-hour ones.
_WRITE_LABELS: Final = {
    None: ("5-minute cache writes", "1-hour cache writes"),
    "openai": ("30-minute cache writes", "12-hour cache writes"),
}


def cost_of(model: str, usage: Mapping[str, Any], provider: str | None = None) -> ModelCost:
    """Tokens and USD of one response's usage (``provider``: see ``price_for``)."""
    tokens = tokens_of(usage)
    price = price_for(model, provider)
    if price is None:
        _warn_once(
            model,
            f"vcr_kit: no price for model {model!r}; its tokens are counted, its cost is 0. "
            "Add one with vcr_kit.set_price().",
        )
        return tokens
    prompt = tokens.input_tokens + tokens.cache_write_tokens + tokens.cache_read_tokens
    threshold = price.long_context_threshold
    if price.long_context is not None and threshold is not None and prompt > threshold:
        price = price.long_context
    usd = tokens.input_tokens * price.input + tokens.output_tokens * price.output
    short, long = _WRITE_LABELS.get(provider, ("cache writes", "long cache writes"))
    for count, rate, label in (
        (tokens.cache_write_5m_tokens, price.cache_write_5m, short),
        (tokens.cache_write_1h_tokens, price.cache_write_1h, long),
        (tokens.cache_read_tokens, price.cache_read, "cache reads"),
    ):
        if not count:
            continue
        if rate is None:
            _warn_once(
                f"{model}:{label}",
                f"vcr_kit: no confirmed price for {label} of {model!r}; counted at 0.",
            )
            continue
        usd += count * rate
    return ModelCost(
        tokens.calls,
        tokens.input_tokens,
        tokens.output_tokens,
        tokens.cache_write_5m_tokens,
        tokens.cache_write_1h_tokens,
        tokens.cache_read_tokens,
        usd / 1_000_000,
    )


# Set while a cassette runs its function to record it: a vcr_kit client inside that
# function must not count the response the cassette is about to count (else a
# recording run would count it twice and its replay once).
_inside_cassette: contextvars.ContextVar[bool] = contextvars.ContextVar(
    "vcr_kit_inside_cassette", default=False
)


@contextmanager
def counted_by_caller() -> Iterator[None]:
    """Responses added while the block runs are counted by the enclosing cassette."""
    token = _inside_cassette.set(True)
    try:
        yield
    finally:
        _inside_cassette.reset(token)


@dataclass(frozen=True)
class PricedUsage:
    """A response's usage entries priced: each (model, cost), and their USD together,
    under the price table as it was at ``state`` (``prices_state``). A replayed fixture
    prices its usage once and counts the same ``PricedUsage`` on every replay."""

    state: tuple[int, int]
    costs: tuple[tuple[str, ModelCost], ...]
    usd: float


def priced_usage(entries: Iterable[Mapping[str, Any]]) -> PricedUsage:
    """``{"model": ..., "usage": {...}}`` entries priced now (nothing counted yet)."""
    state = prices_state()
    costs: list[tuple[str, ModelCost]] = []
    total = 0.0
    for entry in entries:
        model = str(entry.get("model") or "unknown")
        usage = entry.get("usage")
        if not isinstance(usage, Mapping):
            continue
        provider = entry.get("provider")  # absent for Anthropic's entries
        cost = cost_of(model, usage, provider if isinstance(provider, str) else None)
        if entry.get("batch"):  # an answer of the Message Batches API
            cost = dataclasses.replace(cost, usd=cost.usd * BATCH_RATE)
        total += cost.usd
        costs.append((model, cost))
    return PricedUsage(state, tuple(costs), total)


#: Added up once this many are counted: a fixture read again (its file changed, or it
#: left the cache) is priced anew, and a long run must not hold every old pricing.
_MAX_PENDING: Final = 1024


def add_priced(priced: PricedUsage) -> float:
    """Add what ``priced_usage`` priced to the session; return its USD. Meant for a
    ``PricedUsage`` kept and added again and again (a replayed fixture's)."""
    if _inside_cassette.get():
        return 0.0
    with COST.lock:
        held = COST.pending.get(id(priced))
        if held is None:  # the list holds it: its id is not given to another meanwhile
            if len(COST.pending) >= _MAX_PENDING:
                _add_pending()
            COST.pending[id(priced)] = [priced, 1]
        else:
            held[1] += 1
    return priced.usd


def _add_pending() -> None:
    """The counted replays into ``by_model`` (called under ``COST.lock``)."""
    by_model = COST.by_model
    for priced, times in COST.pending.values():
        for model, cost in priced.costs:
            total = by_model.get(model, ModelCost())
            for _ in range(times):  # added one by one, as each replay's would have been
                total = total + cost
            by_model[model] = total
    COST.pending.clear()


def add_usage(entries: Iterable[Mapping[str, Any]]) -> float:
    """Add ``{"model": ..., "usage": {...}}`` entries to the session; return their USD."""
    if _inside_cassette.get():
        return 0.0  # nothing priced either: the enclosing cassette counts (and warns)
    priced = priced_usage(entries)
    with COST.lock:  # priced once and added once: added now
        by_model = COST.by_model
        for model, cost in priced.costs:
            by_model[model] = by_model.get(model, ModelCost()) + cost
    return priced.usd


def session_cost() -> SessionCost:
    """Tokens by kind, USD and a per-model breakdown of every response this session."""
    with COST.lock:
        _add_pending()
        by_model = dict(COST.by_model)
    total = sum(by_model.values(), ModelCost())
    return SessionCost(**{f: getattr(total, f) for f in _FIELDS}, by_model=by_model)


def reset_session_cost() -> None:
    with COST.lock:
        COST.pending.clear()
        COST.by_model.clear()


def usage_entries(value: Any) -> list[dict[str, Any]]:
    """The (model, usage) of every message in a wire JSON value.

    A Message (``type: message``) counts once. A list of raw stream events counts
    as the one message it assembles (``_core.stream_message``, as the SDK does):
    ``message_start`` carries the model and the input usage, ``message_delta`` the
    running totals (each count it gives replaces the start's). Each ``message_start``
    in a list begins another message.
    """
    if isinstance(value, dict):
        if value.get("type") == "message" and isinstance(value.get("usage"), dict):
            return [{"model": value.get("model"), "usage": value["usage"]}]
        return []
    if not isinstance(value, list):
        return []
    entries: list[dict[str, Any]] = []
    current: dict[str, Any] | None = None
    for item in value:
        kind = item.get("type") if isinstance(item, dict) else None
        snapshot = start_snapshot(item) if kind == "message_start" else None
        if snapshot is not None:
            current = snapshot
            # The snapshot's own usage dict: apply_message_delta changes it in place.
            entries.append({"model": snapshot.get("model"), "usage": snapshot["usage"]})
        elif kind == "message_delta" and current is not None:
            apply_message_delta(current, item)
        else:
            entries.extend(usage_entries(item))
    return entries
