"""Rule options (docs/rules.md §8): one engine, named options, one preset per source."""

from dataclasses import dataclass, field, fields, replace
from typing import Any, TypeVar

from .errors import InvalidRules

WHEN = ("on_turn", "together", "in_turn_first_deal", "automatic")
SCORING = ("pot", "highest_only")
TIE = ("earlier", "split")
DEAL = ("table4", "hand4")
STREAK = ("darba", "pile", "caida")
WIN = ("immediate", "round_end")


@dataclass(frozen=True)
class Announce:
    when: str = "on_turn"
    scoring: str = "pot"
    tie: str = "earlier"
    double_ronda: bool = False
    all_four_lowest: bool = True
    undeclared_penalty: bool = False
    ronda_points: int = 1
    tringa_points: int = 5


@dataclass(frozen=True)
class Rules:
    preset: str = "classic"
    teams: bool = True
    deal: str = "table4"
    table_restriction: bool = True
    capture_runs: bool = True
    streak: str = "darba"
    missa_points: int = 1
    missa_last_card: bool = False
    announce: Announce = field(default_factory=Announce)
    dealer_last_card: bool = False
    target: int = 41
    win: str = "immediate"

    def player_counts(self) -> tuple[int, ...]:
        return (2, 4) if self.deal == "hand4" else (2, 3, 4)

    def check_players(self, players: int) -> None:
        if players not in (2, 3, 4):
            raise InvalidRules("players", f"Ronda is played by 2, 3 or 4 players, not {players}")
        if players not in self.player_counts():
            raise InvalidRules("deal", f"'{self.deal}' cannot be dealt to {players} players "
                                       f"(possible: {', '.join(map(str, self.player_counts()))})")

    def hand_sizes(self, players: int) -> tuple[int, ...]:
        """Cards per hand in each deal of a round (docs/rules.md §2)."""
        if self.deal == "hand4":
            return (4,) * 5 if players == 2 else (4, 3, 3)
        return (3,) * ((40 - 4) // (3 * players))

    def to_dict(self) -> dict:
        # dataclasses.asdict deep-copies every field; rules are flat apart from `announce`.
        return {**vars(self), "announce": dict(vars(self.announce))}


PRESETS = {
    "classic": Rules(),
    "traditional": Rules(
        preset="traditional", deal="hand4", table_restriction=False, streak="pile",
        announce=Announce(when="together", tie="split", double_ronda=True, all_four_lowest=False)),
    "runda": Rules(
        preset="runda", streak="caida", missa_last_card=True, win="round_end",
        announce=Announce(when="in_turn_first_deal", scoring="highest_only",
                          all_four_lowest=False, undeclared_penalty=True)),
    "simple": Rules(
        preset="simple", teams=False, table_restriction=False, missa_last_card=True,
        announce=Announce(when="automatic", all_four_lowest=False)),
    "elaborate": Rules(
        preset="elaborate", teams=False, deal="hand4", table_restriction=False,
        missa_last_card=True, dealer_last_card=True,
        announce=Announce(when="automatic", all_four_lowest=False)),
}

T = TypeVar("T", "Rules", "Announce")

_CHOICES = {"deal": DEAL, "streak": STREAK, "win": WIN, "when": WHEN, "scoring": SCORING, "tie": TIE}
_MINIMUM = {"missa_points": 0, "ronda_points": 0, "tringa_points": 0, "target": 1}


def _checked(option: str, name: str, value: object, default: object) -> object:
    if isinstance(default, bool):
        if not isinstance(value, bool):
            raise InvalidRules(option, "must be true or false")
    elif isinstance(default, int):
        if isinstance(value, bool) or not isinstance(value, int):
            raise InvalidRules(option, "must be an integer")
        if value < _MINIMUM[name]:
            raise InvalidRules(option, f"must be at least {_MINIMUM[name]}")
    elif value not in _CHOICES[name]:
        raise InvalidRules(option, f"must be one of {', '.join(_CHOICES[name])}")
    return value


def _overridden(base: T, overrides: dict, prefix: str = "") -> T:
    known = {f.name for f in fields(base)} - {"preset"}
    changes: dict[str, Any] = {}
    for name, value in overrides.items():
        option = prefix + str(name)
        if name not in known:
            raise InvalidRules(option, "unknown option")
        default = getattr(base, name)
        if isinstance(default, Announce):
            if not isinstance(value, dict):
                raise InvalidRules(option, "must be an object")
            changes[name] = _overridden(default, value, option + ".")
        else:
            changes[name] = _checked(option, name, value, default)
    return replace(base, **changes)


def rules_from_request(request: dict | None) -> Rules:
    """`{"preset": "runda", "capture_runs": false}` → Rules; unknown or bad options are refused."""
    request = dict(request or {})
    preset = request.pop("preset", "classic")
    if preset not in PRESETS:
        raise InvalidRules("preset", f"unknown preset {preset!r}; presets: {', '.join(PRESETS)}")
    return _overridden(PRESETS[preset], request)


def rules_from_dict(data: dict) -> Rules:
    data = dict(data)
    return Rules(**{**data, "announce": Announce(**data["announce"])})
