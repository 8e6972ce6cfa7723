"""AAPOR final dispositions and outcome rates (response, cooperation, refusal, contact).

:func:`dispositions` turns :func:`~surveykit.campaign_status` (one row per respondent:
sends, receipts, replies, STOPs, results) into one final disposition code per respondent,
as AAPOR's *Standard Definitions* (10th edition, 2023) classify them; :func:`outcome_rates`
computes the rates from any frame of such codes.

The codes and the groups the rates count (AAPOR's letters):

====  =========================================  =====
code  meaning                                    group
====  =========================================  =====
1.1   complete                                   I
1.2   partial                                    P
2.1x  refusal and break-off (2.11, 2.12, ...)    R
2.2x  non-contact                                NC
2.3x  other (contact, no interview)              O
3.1x  unknown if eligible: nothing known         UH
3.x   unknown eligibility, other (3.2x - 3.9x)   UO
4.x   not eligible                               NE
====  =========================================  =====

The mapping from an SMS, WhatsApp or email campaign's events to codes is a choice, written
down here and in ``docs/campaign.md``, and every step of it can be overridden (``codes=``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final, Literal

import numpy as np
import pandas as pd

from surveykit.errors import DispositionError

__all__ = ["DISPOSITION_RULES", "RATES", "dispositions", "outcome_rates"]


DISPOSITION_RULES: Final[dict[str, tuple[str, str]]] = {
    "completed": ("1.1", "the results say the survey was completed"),
    "started": ("1.2", "answered some questions (partial='break-off' makes it 2.12)"),
    "opted_out": ("2.11", "STOP (or on the opt-out list, or blocked by the platform): refusal"),
    "undeliverable": ("3.30", "never delivered, invalid or landline number: not delivered"),
    "answered_back": ("2.30", "replied or clicked but never started: contact, no interview"),
    "delivered_silent": (
        "3.19",
        "delivered, nothing ever returned (eligibility='eligible' makes it 2.20, non-contact)",
    ),
    "contacted": ("3.19", "accepted by the platform, no receipt: nothing ever returned"),
    "not_contacted": ("3.11", "no invitation sent"),
}
"""Each rule of :func:`dispositions`, in the order it is applied: its code and why."""

RATES: Final = (
    "RR1", "RR2", "RR3", "RR4", "RR5", "RR6",
    "COOP1", "COOP2", "COOP3", "COOP4",
    "REF1", "REF2", "REF3",
    "CON1", "CON2", "CON3",
)  # fmt: skip
"""The outcome rates :func:`outcome_rates` returns, in this order."""

_USES_E: Final = frozenset({"RR3", "RR4", "REF2", "CON2"})
_LETTERS: Final = ("I", "P", "R", "NC", "O", "UH", "UO", "NE")


def dispositions(
    status: pd.DataFrame,
    *,
    partial: Literal["partial", "break-off"] = "partial",
    eligibility: Literal["unknown", "eligible"] = "unknown",
    codes: Mapping[str, str] | None = None,
) -> pd.DataFrame:
    """One AAPOR final disposition per respondent of :func:`~surveykit.campaign_status`.

    The rules of :data:`DISPOSITION_RULES` are applied in order, the first that holds
    wins: completed (1.1); started (1.2, or 2.12 with ``partial="break-off"``); opted out
    (2.11); undeliverable (3.30); replied or clicked without starting (2.30); delivered and
    silent (3.19, or 2.20 with ``eligibility="eligible"``: the analyst knows every
    delivered number belongs to an eligible person); accepted by the platform but with no
    receipt (3.19); never contacted (3.11).

    Args:
        status: the frame :func:`~surveykit.campaign_status` returns.
        partial: whether a started, uncompleted survey is a partial (1.2) or a break-off
            (2.12, counted with refusals).
        eligibility: whether a delivered but silent respondent is of unknown eligibility
            (3.19) or eligible (2.20, a non-contact).
        codes: overrides, ``{rule: code}`` with a rule of :data:`DISPOSITION_RULES`.

    Returns:
        ``status`` with three columns added: ``disposition`` (the code, text),
        ``disposition_group`` (I, P, R, NC, O, UH, UO or NE) and ``disposition_rule``.

    Raises:
        DispositionError: a missing column, an unknown rule or a code that is not AAPOR's.
    """
    chosen = {rule: code for rule, (code, _) in DISPOSITION_RULES.items()}
    if partial == "break-off":
        chosen["started"] = "2.12"
    elif partial != "partial":
        raise DispositionError(f"partial must be 'partial' or 'break-off', not {partial!r}")
    if eligibility == "eligible":
        chosen["delivered_silent"] = "2.20"
    elif eligibility != "unknown":
        raise DispositionError(f"eligibility must be 'unknown' or 'eligible', not {eligibility!r}")
    for rule, code in (codes or {}).items():
        if rule not in chosen:
            raise DispositionError(
                f"codes: no rule {rule!r}; the rules are {list(DISPOSITION_RULES)}"
            )
        _group(code, where=f"codes[{rule!r}]")
        chosen[rule] = code
    masks = _rule_masks(status)
    rules = list(chosen)
    picked = np.select([masks[r] for r in rules], rules, default="not_contacted")
    out = status.copy()
    out["disposition"] = pd.Series(
        [chosen[r] for r in picked], index=status.index, dtype="string"
    )
    out["disposition_group"] = pd.Series(
        [_group(c) for c in out["disposition"]], index=status.index, dtype="string"
    )
    out["disposition_rule"] = pd.Series(picked, index=status.index, dtype="string")
    return out


def _rule_masks(status: pd.DataFrame) -> dict[str, np.ndarray[Any, np.dtype[np.bool_]]]:
    needed = ("status", "delivered", "clicked", "replied", "contacts")
    missing = [c for c in needed if c not in status.columns]
    if missing:
        raise DispositionError(
            f"dispositions needs campaign_status's columns; missing {missing}"
        )
    state = status["status"].astype("string").to_numpy(dtype=object)

    def flag(column: str) -> np.ndarray[Any, np.dtype[np.bool_]]:
        return np.asarray(status[column].fillna(False).to_numpy(dtype=bool))

    delivered = flag("delivered")
    answered_back = flag("replied") | flag("clicked")
    return {
        "completed": state == "completed",
        "started": state == "started",
        "opted_out": state == "opted_out",
        "undeliverable": state == "undeliverable",
        "answered_back": (state == "contacted") & answered_back,
        "delivered_silent": (state == "contacted") & delivered,
        "contacted": state == "contacted",
        "not_contacted": state == "not_contacted",
    }


def _group(code: Any, *, where: str = "disposition") -> str:
    """AAPOR's group letter of a code such as ``"2.11"`` (an error naming it otherwise)."""
    text = str(code).strip()
    head, _, tail = text.partition(".")
    if head not in {"1", "2", "3", "4"} or not tail.isdigit():
        raise DispositionError(
            f"{where}: {code!r} is not an AAPOR disposition code (like '1.1', '2.11', "
            "'3.19', '4.70')"
        )
    if head == "1":
        if tail == "1":
            return "I"
        if tail == "2":
            return "P"
        raise DispositionError(f"{where}: {code!r}: interviews are 1.1 (complete) or 1.2")
    if head == "2":
        letter = {"1": "R", "2": "NC", "3": "O"}.get(tail[0])
        if letter is None:
            raise DispositionError(
                f"{where}: {code!r}: eligible non-interviews are 2.1x, 2.2x or 2.3x"
            )
        return letter
    if head == "3":
        return "UH" if tail[0] == "1" else "UO"
    return "NE"


def outcome_rates(
    dispositions: pd.DataFrame | pd.Series,
    *,
    e: float | Literal["proportional"] = "proportional",
    by: str | Sequence[str] | None = None,
) -> pd.DataFrame:
    """AAPOR's outcome rates (Standard Definitions) from final disposition codes.

    With I complete, P partial, R refusal and break-off, NC non-contact, O other, UH and UO
    unknown eligibility, NE not eligible, and ``e`` the estimated share of unknowns that are
    eligible:

    - RR1 = I / ((I+P) + (R+NC+O) + (UH+UO)); RR2 counts I+P; RR3 and RR4 put
      e (UH+UO) in the denominator; RR5 and RR6 leave the unknowns out.
    - COOP1 = I / ((I+P) + R + O); COOP2 counts I+P; COOP3 and COOP4 leave O out.
    - REF1 = R / ((I+P) + (R+NC+O) + (UH+UO)); REF2 with e (UH+UO); REF3 without.
    - CON1 = ((I+P) + R + O) / ((I+P) + (R+NC+O) + (UH+UO)); CON2 with e; CON3 without.

    ``e="proportional"`` is (I+P+R+NC+O) / (I+P+R+NC+O+NE), the share of eligible among the
    cases whose eligibility is known; a number between 0 and 1 is used as it is.

    Args:
        dispositions: the frame of :func:`dispositions`, any frame with a ``disposition``
            column of AAPOR codes as text (``"1.1"``, ``"2.11"``, ``"3.21"``...), or a Series
            of them.
        e: the eligibility share of the unknowns, or ``"proportional"``.
        by: group column(s): the rates per group (each with its own proportional e).

    Returns:
        One row per rate (and group): ``[*by, "rate", "value", "numerator", "denominator",
        "e"]``; ``value`` a share 0..1 (NaN when the denominator is 0), ``e`` set on the
        rows that use it (RR3, RR4, REF2, CON2). ``attrs["e"]`` holds the e used (per group
        with ``by``) and ``attrs["counts"]`` the counts per group letter.

    Raises:
        DispositionError: a code that is not AAPOR's (naming it and its row), no
            ``disposition`` column, or an ``e`` outside 0..1.
    """
    frame = _as_frame(dispositions)
    columns = [] if by is None else [by] if isinstance(by, str) else list(by)
    for column in columns:
        if column not in frame.columns:
            raise DispositionError(f"by: no column {column!r}")
    if not (e == "proportional" or (isinstance(e, int | float) and 0 <= float(e) <= 1)):
        raise DispositionError(f"e must be 'proportional' or a share from 0 to 1, not {e!r}")
    groups = _groups_of(frame)
    parts, used_e, counted = [], {}, {}
    grouper = columns[0] if len(columns) == 1 else columns
    # Positions, not labels: a frame of several waves may repeat a respondent's label.
    keys = frame.groupby(grouper, sort=True, dropna=False).indices if columns else {(): None}
    for key, positions in keys.items():
        letters = groups if positions is None else groups.iloc[positions]
        counts = {g: int((letters == g).sum()) for g in _LETTERS}
        share = _proportional(counts) if e == "proportional" else float(e)
        rows = _rates(counts, share)
        values = key if isinstance(key, tuple) else (key,)
        for column, value in reversed(list(zip(columns, values, strict=True))):
            rows.insert(0, column, value)
        parts.append(rows)
        used_e[key] = share
        counted[key] = counts
    out = pd.concat(parts, ignore_index=True)
    if columns:
        out = out[[*columns, "rate", "value", "numerator", "denominator", "e"]]
    out.attrs = {
        "e": used_e[()] if not columns else used_e,
        "e_rule": "proportional" if e == "proportional" else "given",
        "counts": counted[()] if not columns else counted,
    }
    return out


def _as_frame(dispositions: pd.DataFrame | pd.Series) -> pd.DataFrame:
    if isinstance(dispositions, pd.Series):
        return dispositions.rename("disposition").to_frame()
    if not isinstance(dispositions, pd.DataFrame) or "disposition" not in dispositions:
        raise DispositionError(
            "outcome_rates needs a 'disposition' column of AAPOR codes (see sk.dispositions)"
        )
    return dispositions


def _groups_of(frame: pd.DataFrame) -> pd.Series:
    codes = frame["disposition"]
    letters = []
    for row, code in zip(frame.index, codes, strict=True):
        if pd.isna(code):
            raise DispositionError(f"disposition: row {row!r} has no code")
        letters.append(_group(code, where=f"disposition of row {row!r}"))
    return pd.Series(letters, index=frame.index, dtype="string")


def _proportional(c: Mapping[str, int]) -> float:
    eligible = c["I"] + c["P"] + c["R"] + c["NC"] + c["O"]
    known = eligible + c["NE"]
    return eligible / known if known else float("nan")


def _rates(c: Mapping[str, int], e: float) -> pd.DataFrame:
    interviews, partials = c["I"], c["I"] + c["P"]
    eligible_non = c["R"] + c["NC"] + c["O"]
    unknown = c["UH"] + c["UO"]
    all_cases = partials + eligible_non + unknown
    with_e = partials + eligible_non + e * unknown
    known_only = partials + eligible_non
    contacted = partials + c["R"] + c["O"]
    parts: dict[str, tuple[float, float]] = {
        "RR1": (interviews, all_cases),
        "RR2": (partials, all_cases),
        "RR3": (interviews, with_e),
        "RR4": (partials, with_e),
        "RR5": (interviews, known_only),
        "RR6": (partials, known_only),
        "COOP1": (interviews, partials + c["R"] + c["O"]),
        "COOP2": (partials, partials + c["R"] + c["O"]),
        "COOP3": (interviews, partials + c["R"]),
        "COOP4": (partials, partials + c["R"]),
        "REF1": (c["R"], all_cases),
        "REF2": (c["R"], with_e),
        "REF3": (c["R"], known_only),
        "CON1": (contacted, all_cases),
        "CON2": (contacted, with_e),
        "CON3": (contacted, known_only),
    }
    numerators = np.array([parts[r][0] for r in RATES], dtype=np.float64)
    denominators = np.array([parts[r][1] for r in RATES], dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        safe = np.where(denominators > 0, denominators, 1.0)
        values = np.where(denominators > 0, numerators / safe, np.nan)
    return pd.DataFrame(
        {
            "rate": list(RATES),
            "value": values,
            "numerator": numerators,
            "denominator": denominators,
            "e": [e if r in _USES_E else np.nan for r in RATES],
        }
    )
