"""Simulated respondents: what each address does when a message reaches it.

A :class:`RespondentModel` holds the proportions of five behaviours (:data:`BEHAVIOURS`)
and the range of delays. Each address's behaviour and delays are drawn from a hash of
the seed and the address alone (:func:`draw`), so they do not depend on the order of
sends, on the other addresses, or on the run: the same seed and address always behave
the same way, and over many addresses the behaviours come in the model's proportions.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from datetime import timedelta
from typing import Any, Final

BEHAVIOURS: Final = ("answer_first", "answer_after_reminder", "never", "stop", "undeliverable")
"""What a simulated respondent does, in the order the proportions are cumulated:

* ``answer_first``: answers the survey after the first message;
* ``answer_after_reminder``: answers only after a second message (a reminder);
* ``never``: never answers;
* ``stop``: replies STOP after the first message (an email address never answers instead);
  one in ten of them (:data:`IN_WORDS_SHARE`, drawn from the seed and the address) says it
  in other words instead ("please stop texting me", :data:`OPT_OUTS_IN_WORDS`), which the
  platform passes on as an inbound Message, not a Stop;
* ``undeliverable``: every message to the address fails (a ``Failed`` receipt).
"""

DEFAULT_PROPORTIONS: Final = {
    "answer_first": 0.45,
    "answer_after_reminder": 0.20,
    "never": 0.25,
    "stop": 0.05,
    "undeliverable": 0.05,
}
"""The proportions of :class:`RespondentModel` unless told."""

_WIRE: Final = {
    "answerFirst": "answer_first",
    "answerAfterReminder": "answer_after_reminder",
    "never": "never",
    "stop": "stop",
    "undeliverable": "undeliverable",
    "minDelay": "min_delay",
    "maxDelay": "max_delay",
    "seed": "seed",
}
"""The control API's names (``POST /_sandbox/respondents``) of the model's fields."""

MAX_DELAY: Final = 30 * 86_400.0
"""The longest delay a model may draw, in seconds (30 days)."""
_TOLERANCE: Final = 1e-6


@dataclass(frozen=True)
class RespondentModel:
    """How simulated respondents behave: proportions of :data:`BEHAVIOURS` and delays.

    Args:
        answer_first: share of addresses that answer after the first message.
        answer_after_reminder: share that answer only after a second message.
        never: share that never answer.
        stop: share that reply STOP after the first message.
        undeliverable: share whose messages all fail.
        min_delay: the shortest time, in seconds, from a message to the answer or STOP.
        max_delay: the longest such time (delays are drawn log-uniformly in between, so
            most answers come within the first hours and a few much later).
        seed: the seed of the draws (None: the sandbox's).

    Raises:
        ValueError: naming the field: a proportion outside 0..1, proportions that do not
            add up to 1, or delays out of order or range.
    """

    answer_first: float = DEFAULT_PROPORTIONS["answer_first"]
    answer_after_reminder: float = DEFAULT_PROPORTIONS["answer_after_reminder"]
    never: float = DEFAULT_PROPORTIONS["never"]
    stop: float = DEFAULT_PROPORTIONS["stop"]
    undeliverable: float = DEFAULT_PROPORTIONS["undeliverable"]
    min_delay: float = 300.0
    max_delay: float = 8 * 3600.0
    seed: int | None = None

    def __post_init__(self) -> None:
        for name in BEHAVIOURS:
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise ValueError(f"{name}: expected a proportion from 0 to 1, got {value!r}")
            if not math.isfinite(value) or not 0 <= value <= 1:
                raise ValueError(f"{name}: expected a proportion from 0 to 1, got {value!r}")
        total = sum(float(getattr(self, name)) for name in BEHAVIOURS)
        if abs(total - 1) > _TOLERANCE:
            shares = ", ".join(f"{name}={getattr(self, name):g}" for name in BEHAVIOURS)
            raise ValueError(f"respondents: the proportions add up to {total:g}, not 1 ({shares})")
        for name in ("min_delay", "max_delay"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise ValueError(f"{name}: expected seconds from 1 to {MAX_DELAY:g}, got {value!r}")
            if not math.isfinite(value) or not 1 <= value <= MAX_DELAY:
                raise ValueError(f"{name}: expected seconds from 1 to {MAX_DELAY:g}, got {value!r}")
        if self.max_delay < self.min_delay:
            raise ValueError(
                f"max_delay: expected at least min_delay ({self.min_delay:g} s), "
                f"got {self.max_delay:g}"
            )
        seed = self.seed
        if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int)):
            raise ValueError(f"seed: expected a whole number, got {self.seed!r}")

    @classmethod
    def of(cls, value: RespondentModel | Mapping[str, Any] | bool | None) -> RespondentModel | None:
        """The model ``Sandbox(respondents=...)`` means.

        None or False: no simulation; True: the defaults; a mapping: its fields, where a
        mapping that names any proportion gives 0 to the behaviours it leaves out (so
        ``{"answer_first": 0.5, "never": 0.5}`` is a complete model); a model as it is.
        """
        if value is None or value is False:
            return None
        if value is True:
            return cls()
        if isinstance(value, RespondentModel):
            return value
        if not isinstance(value, Mapping):
            raise ValueError(
                "respondents: expected True, a RespondentModel or a mapping of proportions, "
                f"got {type(value).__name__}"
            )
        known = {*BEHAVIOURS, "min_delay", "max_delay", "seed"}
        unknown = sorted(str(key) for key in value if key not in known)
        if unknown:
            raise ValueError(f"respondents: unknown fields {unknown} (known: {', '.join(known)})")
        fields = dict(value)
        if any(name in fields for name in BEHAVIOURS):
            for name in BEHAVIOURS:
                fields.setdefault(name, 0.0)
        for name in ("min_delay", "max_delay"):
            if isinstance(fields.get(name), timedelta):
                fields[name] = fields[name].total_seconds()
        return cls(**fields)

    @classmethod
    def from_wire(cls, body: Mapping[str, Any]) -> RespondentModel:
        """The model from the control API's JSON names (``answerFirst``, ``minDelay``...)."""
        unknown = sorted(str(key) for key in body if key not in _WIRE)
        if unknown:
            raise ValueError(f"unknown fields: {unknown} (known: {', '.join(_WIRE)})")
        model = cls.of({_WIRE[key]: value for key, value in body.items()})
        assert model is not None
        return model

    @classmethod
    def from_spec(cls, spec: str) -> RespondentModel:
        """The model of ``surveykit sandbox serve --respondents SPEC``.

        ``default`` (or an empty spec) is the defaults; otherwise comma-separated
        ``name=value`` pairs of the Python names (``answer_first=0.5,never=0.5``).
        """
        text = spec.strip()
        if text.lower() in ("", "default", "on", "true"):
            return cls()
        fields: dict[str, Any] = {}
        for part in text.split(","):
            name, sep, raw = part.partition("=")
            name = name.strip()
            if not sep or not name:
                raise ValueError(f"expected NAME=VALUE pairs separated by commas, got {part!r}")
            try:
                fields[name] = int(raw) if name == "seed" else float(raw)
            except ValueError:
                raise ValueError(f"{name}: expected a number, got {raw.strip()!r}") from None
        model = cls.of(fields)
        assert model is not None
        return model

    def wire(self) -> dict[str, Any]:
        """The model in the control API's names."""
        python = asdict(self)
        return {wire: python[name] for wire, name in _WIRE.items()}

    def proportions(self) -> dict[str, float]:
        """The share of each behaviour, in the order of :data:`BEHAVIOURS`."""
        return {name: float(getattr(self, name)) for name in BEHAVIOURS}


def address_key(address: str) -> str:
    """The form an address is drawn and counted by: digits of a number, a lower-case email."""
    text = address.strip()
    return text.lower() if "@" in text else text.lstrip("+")


def _uniform(seed: int, purpose: str, address: str, extra: str = "") -> float:
    """A number in [0, 1) from a hash of the seed, the purpose and the address."""
    digest = hashlib.blake2b(
        f"{seed}\x1f{purpose}\x1f{address_key(address)}\x1f{extra}".encode(), digest_size=8
    ).digest()
    return int.from_bytes(digest, "big") / 2.0**64


def behaviour(model: RespondentModel, seed: int, address: str) -> str:
    """What ``address`` does under ``model`` with ``seed`` (one of :data:`BEHAVIOURS`)."""
    u = _uniform(seed, "behaviour", address)
    edge = 0.0
    shares = [(name, share) for name, share in model.proportions().items() if share > 0]
    for name, share in shares:
        edge += share
        if u < edge:
            return name
    return shares[-1][0]  # the proportions' sum rounded a little under 1


def delay(model: RespondentModel, seed: int, address: str, contact: int) -> timedelta:
    """How long after its ``contact``-th message ``address`` answers or replies STOP.

    Drawn log-uniformly between the model's ``min_delay`` and ``max_delay``.
    """
    u = _uniform(seed, "delay", address, str(contact))
    low, high = model.min_delay, model.max_delay
    return timedelta(seconds=round(low * (high / low) ** u))


IN_WORDS_SHARE: Final = 0.1
"""The share of ``stop`` respondents who opt out in other words rather than with STOP."""

OPT_OUTS_IN_WORDS: Final = {
    "en": (
        "Please stop texting me",
        "I want to unsubscribe",
        "Remove me from your list",
        "No more messages please",
        "Please stop sending me these",
    ),
    "fr": (
        "Arrêtez de m'envoyer des SMS",
        "Désabonnez-moi svp",
        "Ne m'envoyez plus de messages",
    ),
}
"""What a ``stop`` respondent who opts out in words replies (French for +33 numbers)."""


def stop_reply(seed: int, address: str) -> str:
    """What a ``stop`` respondent replies: ``STOP``, or rarely an opt-out in other words."""
    if _uniform(seed, "stop words", address) >= IN_WORDS_SHARE:
        return "STOP"
    texts = OPT_OUTS_IN_WORDS["fr" if address_key(address).startswith("33") else "en"]
    return texts[int(_uniform(seed, "stop text", address) * len(texts))]


def duration(seed: int, address: str) -> timedelta:
    """How long a respondent takes from starting the survey to completing it (1-10 min)."""
    return timedelta(seconds=60 + round(540 * _uniform(seed, "duration", address)))


__all__ = [
    "BEHAVIOURS",
    "DEFAULT_PROPORTIONS",
    "IN_WORDS_SHARE",
    "OPT_OUTS_IN_WORDS",
    "RespondentModel",
    "address_key",
    "behaviour",
    "delay",
    "duration",
    "stop_reply",
]
