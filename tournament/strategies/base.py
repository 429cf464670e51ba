"""The one interface every strategy has, and the registry that builds them by name.

A strategy is a seat's player: given the seat's view (its hand, the public facts and its legal
actions) it returns one of those legal actions. Each strategy object owns its randomness
(`random.Random(seed)`), so a game played by strategies is reproducible from their seeds.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol, runtime_checkable

from domain.view import Action, SeatView


@runtime_checkable
class Strategy(Protocol):
    """A player: `strategy(view)` returns one of `view.legal` (usable as a playout Policy)."""

    name: str

    def __call__(self, view: SeatView) -> Action: ...


class UnknownStrategy(ValueError):
    """A strategy name or option that the registry does not know."""


Factory = Callable[..., Strategy]
_REGISTRY: dict[str, tuple[Factory, frozenset[str]]] = {}


def register(name: str, options: tuple[str, ...] = ()) -> Callable[[Factory], Factory]:
    """Add a strategy class under `name`, built as `factory(seed, **options)`.

    `options` names the keyword options it takes; others passed to make_strategy are ignored,
    so a match can hand `budget_ms` to every strategy and only the ones that search use it.
    """

    def add(factory: Factory) -> Factory:
        _REGISTRY[name] = (factory, frozenset(options))
        return factory

    return add


def strategy_names() -> tuple[str, ...]:
    _load_builtins()
    return tuple(sorted(_REGISTRY))


def parse_spec(spec: str) -> tuple[str, dict[str, float]]:
    """Split `strong:rollouts=40,budget_ms=100` into the name and numeric options."""
    name, _, rest = spec.strip().partition(":")
    options: dict[str, float] = {}
    for item in filter(None, (part.strip() for part in rest.split(","))):
        key, eq, value = item.partition("=")
        if not eq:
            raise UnknownStrategy(f"option {item!r} of {spec!r} is not key=value")
        try:
            options[key.strip()] = float(value)
        except ValueError:
            raise UnknownStrategy(f"option {key!r} of {spec!r} must be a number") from None
    return name, options


_SCHEMES: dict[str, Callable[[str, int], Strategy]] = {}


def register_scheme(prefix: str, factory: Callable[[str, int], Strategy]) -> None:
    """Let specs that start with `prefix` (e.g. `http://`) be built by `factory(spec, seed)`.

    How a bot over HTTP joins a match without this package knowing any transport: the
    service's bot kit registers its remote-bot adapter here.
    """
    _SCHEMES[prefix] = factory


def make_strategy(name: str, seed: int, **options: float | None) -> Strategy:
    """The strategy called `name` (optionally `name:key=value,...`), seeded with `seed`.

    Keyword options (e.g. `budget_ms`, `rollouts`) go to strategies that take them; options
    given in the name win over keyword ones. None means "the strategy's default".
    """
    for prefix, scheme in _SCHEMES.items():
        if name.startswith(prefix):
            return scheme(name, seed)
    _load_builtins()
    base, spec_options = parse_spec(name)
    entry = _REGISTRY.get(base)
    if entry is None:
        known = ", ".join(sorted(_REGISTRY))
        raise UnknownStrategy(f"unknown strategy {base!r} (one of {known})")
    factory, accepted = entry
    unknown = set(spec_options) - accepted
    if unknown:
        takes = ", ".join(sorted(accepted)) or "no options"
        raise UnknownStrategy(f"{base!r} does not take {', '.join(sorted(unknown))} ({takes})")
    merged = {k: v for k, v in options.items() if v is not None and k in accepted}
    merged.update(spec_options)
    return factory(seed, **merged)


def _load_builtins() -> None:
    """Import the built-in strategies, which register themselves (imports are cached)."""
    from tournament.strategies import expert, heuristic, random_, strong  # noqa: F401
