"""Deterministic, realistic survey results for the sandbox, the tests and the benchmarks.

The frames hold the platform's text, exactly as GetResults carries it: every column is a
string column (missing = ``<NA>``), timestamps are ISO 8601 in the respondent's local
offset, ratings are ``"0"``..``"10"``. Feed them to
:func:`surveykit.results.write_results`; :func:`surveykit.results.read_results` types them.

The same ``seed`` (and ``rows``, ``questions``, ``nasty``) always gives the same data,
whatever ``chunk_rows`` is: rows are drawn in fixed blocks, each from its own generator.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, Final

import numpy as np
import pandas as pd

__all__ = ["generate_results", "generate_results_frame"]

_BLOCK: Final = 50_000
_STRING: Final = pd.StringDtype("pyarrow")
_EPOCH: Final = int(np.datetime64("2026-01-05T00:00:00", "s").astype(np.int64))

# (country calling code, mobile prefix, digits after the prefix, UTC offset in minutes)
_COUNTRIES: Final = (
    ("44", "7700", 6, 0),
    ("1", "201555", 4, -300),
    ("49", "151", 8, 60),
    ("33", "6", 8, 60),
    ("61", "4", 8, 600),
    ("27", "82", 7, 120),
    ("91", "98", 8, 330),
    ("64", "21", 7, 780),
)
_TITLES: Final = ("Mr", "Mrs", "Ms", "Dr", "Mx", "Prof")
_FIRST: Final = (
    "Olivia",
    "Noah",
    "Zoë",
    "José",
    "Łukasz",
    "Søren",
    "Ngọc Anh",
    "Siobhán",
    "李娜",
    "Мария",
    "Ahmed",
    "Anne-Marie",
    "Chloé",
    "Björn",
    "Aoife",
    "Priya",
    "Kwame",
    "Émile",
)
_LAST: Final = (
    "Smith",
    "O'Brien",
    "García",
    "Müller",
    "Nguyễn",
    "Kowalski",
    "Ørsted",
    "王",
    "Иванова",
    "Ndlovu",
    "Van der Berg",
    "Smith, Jr.",
    "D'Angelo",
    "Østergård",
    "Patel",
)
_NASTY_NAMES: Final = ("Joy 😀", '"Bud" Lee', "A|B", "Tab\tName", "Zoë 🌍", "N/A", "null")
_CHANNELS: Final = ("SMS", "WhatsApp", "Email", "Facebook")
_CHOICES: Final = ("Yes", "No", "Not sure", "Prefer not to say")
_MULTI: Final = ("Price", "Quality", "Service", "Delivery", "Support", "App")
_TEXT: Final = (
    "Great service",
    "Too slow",
    "Would recommend to friends",
    "Nothing to add",
    "Staff were helpful",
    "Price is too high",
    "Easy to use",
    "Delivery was late",
)
_NASTY_TEXT: Final = (
    "Good, but slow",
    "a|b|c",
    'She said "fine"',
    "line one\nline two",
    "windows\r\nline",
    "old mac\rline",
    "tab\tseparated",
    "<b>bold</b> & more",
    "]]> not CDATA",
    "😀👍🏽 emoji",
    "Zoë's café",
    "N/A",
    "null",
    "None",
    "NA",
    "",
    " leading and trailing ",
    "007",
    "semi;colon;list",
    'comma,"quote"\r\n|pipe',
    "日本語のテキスト",
    "\u200bzero width",
)
_NA_ANSWERS: Final = ("N/A", "null", "None", "NA")
CHOICES: Final = _CHOICES
"""The options of generated single-choice questions (Q2, Q6, ...)."""
MULTI: Final = _MULTI
"""The options of generated multi-choice questions (Q3, Q7, ...), in the form's order."""
NA_ANSWERS: Final = _NA_ANSWERS
"""Non-answers typed as text: in choices and free text of ``nasty`` results."""


def _pick(rng: np.random.Generator, values: tuple[str, ...], n: int) -> np.ndarray[Any, Any]:
    return np.array(values, dtype=object)[rng.integers(0, len(values), n)]


def _blank(rng: np.random.Generator, arr: np.ndarray[Any, Any], p: float) -> None:
    arr[rng.random(len(arr)) < p] = None


def _timestamps(
    seconds: np.ndarray[Any, Any], offsets: np.ndarray[Any, Any], z: np.ndarray[Any, Any]
) -> np.ndarray[Any, Any]:
    local = (seconds + offsets * 60).astype("datetime64[s]")
    text = np.datetime_as_string(local).astype(object)
    sign = np.where(offsets < 0, "-", "+").astype(object)
    hh = np.char.zfill((np.abs(offsets) // 60).astype(str), 2).astype(object)
    mm = np.char.zfill((np.abs(offsets) % 60).astype(str), 2).astype(object)
    suffix = sign + hh + ":" + mm
    suffix[z] = "Z"
    result: np.ndarray[Any, Any] = text + suffix
    return result


_NPS_BASE: Final = np.array([3, 2, 2, 3, 4, 8, 8, 15, 18, 17, 20], dtype=float)
"""Relative frequencies of 0..10 in a wave's ratings: a typical, promoter-heavy NPS curve."""
_CHANNEL_TILT: Final = {"SMS": 0.0, "WhatsApp": 0.5, "Email": -0.4, "Facebook": 0.1}
"""How much each channel's wave ratings lean to the top (+) or bottom (-) of the scale."""
_WAVE_TILT: Final = 0.35
"""How much each later wave leans further to the top than the one before."""


def _wave_ratings(
    rng: np.random.Generator, channel: np.ndarray[Any, Any], wave: int
) -> np.ndarray[Any, Any]:
    """0..10 ratings of a wave: the base curve tilted by the channel and the wave number.

    A tilt ``t`` multiplies the frequency of score ``s`` by ``exp(t * (s - 5) / 5)``, so
    groups and waves differ the way real ones do, and tests can tell them apart.
    """
    scores = np.arange(11)
    draws = rng.random(len(channel))
    out = np.empty(len(channel), dtype=object)
    for name, tilt in _CHANNEL_TILT.items():
        weights = _NPS_BASE * np.exp((tilt + _WAVE_TILT * (wave - 1)) * (scores - 5) / 5)
        cdf = np.cumsum(weights / weights.sum())
        rows = channel == name
        out[rows] = np.minimum(np.searchsorted(cdf, draws[rows], side="right"), 10).astype(str)
    return out


_CHOICE_BASE: Final = np.array([45, 25, 18, 12], dtype=float)
"""Relative frequencies of a wave's single-choice answers, in the order of ``CHOICES``."""


def _wave_choices(
    rng: np.random.Generator, channel: np.ndarray[Any, Any], wave: int
) -> np.ndarray[Any, Any]:
    """A wave's single-choice answers: "Yes" is more frequent where ratings lean higher.

    The first option's frequency is multiplied by ``exp(t)``, ``t`` being the channel's and
    the wave's tilt of the ratings (see :func:`_wave_ratings`).
    """
    draws = rng.random(len(channel))
    options = np.array(_CHOICES, dtype=object)
    out = np.empty(len(channel), dtype=object)
    for name, tilt in _CHANNEL_TILT.items():
        weights = _CHOICE_BASE.copy()
        weights[0] *= np.exp(tilt + _WAVE_TILT * (wave - 1))
        cdf = np.cumsum(weights / weights.sum())
        rows = channel == name
        index = np.minimum(np.searchsorted(cdf, draws[rows], side="right"), len(options) - 1)
        out[rows] = options[index]
    return out


def _block(
    seed: int, block: int, start: int, n: int, questions: int, nasty: bool, wave: int = 0
) -> pd.DataFrame:
    rng = np.random.default_rng([seed, block])
    country = rng.integers(0, len(_COUNTRIES), n)
    codes = np.array([c[0] + c[1] for c in _COUNTRIES], dtype=object)[country]
    digits = np.array([c[2] for c in _COUNTRIES])[country]
    offsets = np.array([c[3] for c in _COUNTRIES])[country]
    subscriber = rng.integers(0, 10**8, n)
    number = np.array(
        [str(s).zfill(8)[-d:] for s, d in zip(subscriber.tolist(), digits.tolist(), strict=True)],
        dtype=object,
    )
    mobile = codes + number
    if nasty:  # national format with a leading zero: must stay text
        local = rng.random(n) < 0.02
        mobile[local] = "07" + number[local]
    ids = np.array([f"R{i:09d}" for i in range(start, start + n)], dtype=object)
    first = _pick(rng, _FIRST + (_NASTY_NAMES if nasty else ()), n)
    last = _pick(rng, _LAST, n)
    title = _pick(rng, _TITLES, n)
    _blank(rng, title, 0.1)
    email = np.array([f"user{i}@example.com" for i in range(start, start + n)], dtype=object)
    _blank(rng, email, 0.05)
    channel = _pick(rng, _CHANNELS, n)
    invited_s = _EPOCH + rng.integers(0, 86_400 * 60, n)
    started_s = invited_s + rng.integers(30, 86_400 * 3, n)
    completed_s = started_s + rng.integers(20, 3_600, n)
    z = rng.random(n) < 0.05
    invited = _timestamps(invited_s, offsets, z)
    started = _timestamps(started_s, offsets, z)
    completed = _timestamps(completed_s, offsets, z)
    done = rng.integers(0, questions + 1, n)
    not_started = done == 0
    started[not_started] = None
    completed[done < questions] = None
    data: dict[str, np.ndarray[Any, Any]] = {
        "respondentId": ids,
        "surveyReference": _pick(rng, ("CSAT-2026-01", "NPS-Q1", "ONBOARD-7"), n),
        "title": title,
        "firstName": first,
        "lastName": last,
        "mobileNumber": mobile,
        "emailAddress": email,
        "channel": channel,
        "invited": invited,
        "started": started,
        "completed": completed,
        "sortOrder": done.astype(str).astype(object),
    }
    text_pool = _TEXT + (_NASTY_TEXT if nasty else ())
    for q in range(1, questions + 1):
        kind = (q - 1) % 4
        if kind == 0:
            answers = rng.integers(0, 11, n).astype(str).astype(object)
            if wave:  # drawn after the legacy draw, so wave 0 keeps its exact values
                answers = _wave_ratings(rng, channel, wave)
        elif kind == 1:
            answers = _pick(rng, _CHOICES + (_NA_ANSWERS if nasty else ()), n)
            if wave:
                answers = _wave_choices(rng, channel, wave)
        elif kind == 2:
            mask = rng.random((n, len(_MULTI))) < 0.35
            answers = np.array(
                [";".join(o for o, m in zip(_MULTI, row, strict=True) if m) for row in mask],
                dtype=object,
            )
        else:
            answers = _pick(rng, text_pool, n) + " " + _pick(rng, _TEXT, n)
            plain = rng.random(n) < 0.2
            answers[plain] = _pick(rng, text_pool, int(plain.sum()))
        if kind == 0:
            _blank(rng, answers, 0.03)  # skipped ratings
        answers[done < q] = None  # not reached
        data[f"Q{q}"] = answers
    return pd.DataFrame(
        {k: pd.array(v, dtype=_STRING) for k, v in data.items()},
        index=pd.RangeIndex(start, start + n),
    )


def generate_results(
    rows: int,
    *,
    seed: int = 0,
    questions: int = 10,
    nasty: bool = True,
    chunk_rows: int = 100_000,
    wave: int = 0,
) -> Iterator[pd.DataFrame]:
    """Yield ``rows`` respondents' results in DataFrames of at most ``chunk_rows`` rows.

    Columns: the respondent fields of ``docs/results-format.md`` then ``Q1``..``Qn``
    (ratings 0-10 with blanks, single choice, ``;``-joined multi-choice, free text, in
    turn). ``nasty`` adds the hostile values: names with emoji, quotes, pipes and tabs;
    free text with commas, pipes, quotes, CR, LF and CRLF; answers typed as "N/A",
    "null", "None", "NA"; national phone numbers with a leading zero.

    ``wave`` 0 draws every rating uniformly from 0..10. ``wave`` 1, 2, ... draws ratings
    like a real tracking survey's waves: a promoter-heavy curve that differs by channel
    (WhatsApp higher, Email lower) and moves up a little with each wave, and single-choice
    answers whose first option ("Yes") follows the same lean, so a report can show
    significant differences between groups and waves.
    """
    if rows < 0 or chunk_rows < 1 or questions < 1 or wave < 0:
        raise ValueError("rows and wave must be >= 0, chunk_rows and questions >= 1")
    pending: list[pd.DataFrame] = []
    have = 0
    for block, start in enumerate(range(0, rows, _BLOCK)):
        pending.append(
            _block(seed, block, start, min(_BLOCK, rows - start), questions, nasty, wave)
        )
        have += len(pending[-1])
        while have >= chunk_rows:
            joined = pd.concat(pending) if len(pending) > 1 else pending[0]
            yield joined.iloc[:chunk_rows]
            rest = joined.iloc[chunk_rows:]
            pending, have = ([rest] if len(rest) else []), len(rest)
    if have:
        yield pd.concat(pending) if len(pending) > 1 else pending[0]


def generate_results_frame(
    rows: int, *, seed: int = 0, questions: int = 10, nasty: bool = True, wave: int = 0
) -> pd.DataFrame:
    """All of :func:`generate_results` in one DataFrame (for small sizes)."""
    chunks = list(generate_results(rows, seed=seed, questions=questions, nasty=nasty, wave=wave))
    if not chunks:
        return _block(seed, 0, 0, 0, questions, nasty, wave)
    return pd.concat(chunks) if len(chunks) > 1 else chunks[0]
