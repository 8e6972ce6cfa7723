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


REGIONS: Final = ("Capital", "North", "South", "East", "Islands")
"""The strata of a generated panel (``design=True``): the ``region`` column's values."""
_REGION_POPULATION: Final = np.array([3_241_517, 2_104_283, 1_796_441, 903_127, 391_609])
"""Adults living in each region: the population the panel's base weights add up to."""
_REGION_BY_CHANNEL: Final = {
    "SMS": (0.18, 0.22, 0.22, 0.20, 0.18),
    "WhatsApp": (0.36, 0.22, 0.18, 0.13, 0.11),
    "Email": (0.34, 0.22, 0.20, 0.14, 0.10),
    "Facebook": (0.24, 0.22, 0.20, 0.17, 0.17),
}
"""P(region | channel), in the order of ``REGIONS``: the channel mix differs by region.

With channels equally likely, the regions' shares of the sample are the column means,
0.28, 0.22, 0.20, 0.16, 0.14: the small regions are oversampled against their shares of
the population (0.38, 0.25, 0.21, 0.11, 0.05), so their base weights are smaller.
"""
_HOUSEHOLD_SIZES: Final = np.array([0.35, 0.30, 0.20, 0.15])
"""How often a household has 1, 2, 3 or 4 respondents."""
_HOUSEHOLD_NOISE: Final = 0.4
"""The spread of the noise added to each lean before households are cut (see :func:`_design`):
the larger, the less a household's members resemble each other."""
_DESIGN_STREAM: Final = 1
"""Mixed into the seed of the design's own generator, so no existing draw moves."""


def _likeness(data: dict[str, np.ndarray[Any, Any]], questions: int) -> np.ndarray[Any, Any]:
    """Each respondent's lean, from -1 to 1: the mean of their ratings and choices.

    A rating ``s`` counts ``(s - 5) / 5``; "Yes" 1, "No" -1, "Not sure" 0; no answer
    counts nothing, and a respondent with none leans 0.
    """
    n = len(data["respondentId"])
    total, count = np.zeros(n), np.zeros(n)
    choice = {"Yes": 1.0, "No": -1.0, "Not sure": 0.0}
    for q in range(1, questions + 1):
        kind = (q - 1) % 4
        if kind > 1:
            continue
        answers = pd.Series(data[f"Q{q}"], dtype=object)
        if kind == 0:
            score = (pd.to_numeric(answers, errors="coerce") - 5) / 5
        else:
            score = answers.map(choice).astype(float)
        seen = score.notna().to_numpy()
        total[seen] += score.to_numpy()[seen]
        count[seen] += 1
    return np.divide(total, count, out=np.zeros(n), where=count > 0)


def _design(
    seed: int,
    block: int,
    start: int,
    rows: int,
    channel: np.ndarray[Any, Any],
    lean: np.ndarray[Any, Any],
) -> dict[str, np.ndarray[Any, Any]]:
    """A panel's design columns: ``region``, ``household`` and ``baseWeight``.

    Drawn from a generator of their own, after every other column, so the answers are the
    ones drawn without a design. The region follows the channel (``_REGION_BY_CHANNEL``).
    Within a region, respondents are ordered by their lean (:func:`_likeness`) plus noise
    and cut into households of 1 to 4, so members of a household answer alike, as a
    household effect makes them; a household's id is ``H`` and its first row's number.
    ``baseWeight`` is the inverse of the region's selection probability, its population
    over its expected sample size.
    """
    rng = np.random.default_rng([seed, block, _DESIGN_STREAM])
    n = len(channel)
    region = np.zeros(n, dtype=np.int64)
    draws = rng.random(n)
    for name, shares in _REGION_BY_CHANNEL.items():
        rows_of = channel == name
        cdf = np.cumsum(shares)
        region[rows_of] = np.minimum(
            np.searchsorted(cdf, draws[rows_of], side="right"), len(REGIONS) - 1
        )
    order = np.lexsort((lean + rng.normal(0, _HOUSEHOLD_NOISE, n), region))
    sizes = rng.choice(np.arange(1, 5), size=n, p=_HOUSEHOLD_SIZES)
    label = np.empty(n, dtype=np.int64)
    position = households = 0
    for code in range(len(REGIONS)):
        members = order[region[order] == code]
        m = len(members)
        label[members] = households + np.repeat(np.arange(m), sizes[position : position + m])[:m]
        position += m
        households = int(label[members].max()) + 1 if m else households
    first = np.full(households, n)
    np.minimum.at(first, label, np.arange(n))
    names = np.array([f"H{start + i:09d}" for i in first.tolist()], dtype=object)
    household = names[label] if n else np.empty(0, dtype=object)
    share = np.mean(list(_REGION_BY_CHANNEL.values()), axis=0)
    weight = _REGION_POPULATION / (max(rows, 1) * share)
    return {
        "region": np.array(REGIONS, dtype=object)[region],
        "household": household,
        "baseWeight": np.array([repr(round(float(w), 2)) for w in weight], dtype=object)[region],
    }


def _block(
    seed: int,
    block: int,
    start: int,
    n: int,
    questions: int,
    nasty: bool,
    wave: int = 0,
    design: bool = False,
    rows: int = 0,
) -> pd.DataFrame:
    # The draws happen in a fixed order (contacts, progress, survey, answers), so a seed
    # gives the same respondents whatever else changes.
    rng = np.random.default_rng([seed, block])
    data, offsets = _contacts(rng, start, n, nasty)
    done = _progress(rng, data, offsets, questions)
    data["surveyReference"] = _pick(rng, ("CSAT-2026-01", "NPS-Q1", "ONBOARD-7"), n)
    data["sortOrder"] = done.astype(str).astype(object)
    keys = ("respondentId", "surveyReference", "title", "firstName", "lastName",
            "mobileNumber", "emailAddress", "channel", "invited", "started", "completed",
            "sortOrder")  # fmt: skip
    data = {k: data[k] for k in keys}
    for q in range(1, questions + 1):
        answers = _answers(rng, q, n, nasty, wave, data["channel"])
        answers[done < q] = None  # not reached
        data[f"Q{q}"] = answers
    if design:
        extra = _design(seed, block, start, rows, data["channel"], _likeness(data, questions))
        names = list(data)
        at = names.index("sortOrder") + 1
        data = {k: data[k] for k in names[:at]} | extra | {k: data[k] for k in names[at:]}
    return pd.DataFrame(
        {k: pd.array(v, dtype=_STRING) for k, v in data.items()},
        index=pd.RangeIndex(start, start + n),
    )


def _contacts(
    rng: np.random.Generator, start: int, n: int, nasty: bool
) -> tuple[dict[str, np.ndarray[Any, Any]], np.ndarray[Any, Any]]:
    """Ids, names, numbers, addresses and channels; and each number's UTC offset."""
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
    first = _pick(rng, _FIRST + (_NASTY_NAMES if nasty else ()), n)
    last = _pick(rng, _LAST, n)
    title = _pick(rng, _TITLES, n)
    _blank(rng, title, 0.1)
    email = np.array([f"user{i}@example.com" for i in range(start, start + n)], dtype=object)
    _blank(rng, email, 0.05)
    data = {
        "respondentId": np.array([f"R{i:09d}" for i in range(start, start + n)], dtype=object),
        "title": title,
        "firstName": first,
        "lastName": last,
        "mobileNumber": mobile,
        "emailAddress": email,
        "channel": _pick(rng, _CHANNELS, n),
    }
    return data, offsets


def _progress(
    rng: np.random.Generator,
    data: dict[str, np.ndarray[Any, Any]],
    offsets: np.ndarray[Any, Any],
    questions: int,
) -> np.ndarray[Any, Any]:
    """Invited, started and completed times into ``data``; the questions each answered."""
    n = len(offsets)
    invited_s = _EPOCH + rng.integers(0, 86_400 * 60, n)
    started_s = invited_s + rng.integers(30, 86_400 * 3, n)
    completed_s = started_s + rng.integers(20, 3_600, n)
    z = rng.random(n) < 0.05
    data["invited"] = _timestamps(invited_s, offsets, z)
    started = _timestamps(started_s, offsets, z)
    completed = _timestamps(completed_s, offsets, z)
    done = rng.integers(0, questions + 1, n)
    started[done == 0] = None
    completed[done < questions] = None
    data["started"], data["completed"] = started, completed
    return done


def _answers(
    rng: np.random.Generator,
    q: int,
    n: int,
    nasty: bool,
    wave: int,
    channel: np.ndarray[Any, Any],
) -> np.ndarray[Any, Any]:
    """Question ``q``'s answers: a 0-10 rating, a choice, a multiple choice or free text."""
    kind = (q - 1) % 4
    if kind == 0:
        answers = rng.integers(0, 11, n).astype(str).astype(object)
        if wave:  # drawn after the legacy draw, so wave 0 keeps its exact values
            answers = _wave_ratings(rng, channel, wave)
        _blank(rng, answers, 0.03)  # skipped ratings
        return answers
    if kind == 1:
        answers = _pick(rng, _CHOICES + (_NA_ANSWERS if nasty else ()), n)
        return _wave_choices(rng, channel, wave) if wave else answers
    if kind == 2:
        mask = rng.random((n, len(_MULTI))) < 0.35
        return np.array(
            [";".join(o for o, m in zip(_MULTI, row, strict=True) if m) for row in mask],
            dtype=object,
        )
    text_pool = _TEXT + (_NASTY_TEXT if nasty else ())
    text: np.ndarray[Any, Any] = _pick(rng, text_pool, n) + " " + _pick(rng, _TEXT, n)
    plain = rng.random(n) < 0.2
    text[plain] = _pick(rng, text_pool, int(plain.sum()))
    return text


def generate_results(
    rows: int,
    *,
    seed: int = 0,
    questions: int = 10,
    nasty: bool = True,
    chunk_rows: int = 100_000,
    wave: int = 0,
    design: bool = False,
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

    ``design`` draws the respondents as a panel's stratified, clustered sample: three
    columns after ``sortOrder`` (:data:`surveykit.results.DESIGN_COLUMNS`), ``region``
    (the stratum, one of :data:`REGIONS`; the channel mix differs by region),
    ``household`` (the PSU, 1 to 4 respondents who answer alike, nested in a region) and
    ``baseWeight`` (the inverse of the region's selection probability: small regions are
    oversampled, so their weights are smaller). Every other column keeps the values it
    has without ``design``.
    """
    if rows < 0 or chunk_rows < 1 or questions < 1 or wave < 0:
        raise ValueError("rows and wave must be >= 0, chunk_rows and questions >= 1")
    pending: list[pd.DataFrame] = []
    have = 0
    for block, start in enumerate(range(0, rows, _BLOCK)):
        pending.append(
            _block(
                seed,
                block,
                start,
                min(_BLOCK, rows - start),
                questions,
                nasty,
                wave,
                design,
                rows,
            )
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
    rows: int,
    *,
    seed: int = 0,
    questions: int = 10,
    nasty: bool = True,
    wave: int = 0,
    design: bool = False,
) -> pd.DataFrame:
    """All of :func:`generate_results` in one DataFrame (for small sizes)."""
    chunks = list(
        generate_results(
            rows, seed=seed, questions=questions, nasty=nasty, wave=wave, design=design
        )
    )
    if not chunks:
        return _block(seed, 0, 0, 0, questions, nasty, wave, design, rows)
    return pd.concat(chunks) if len(chunks) > 1 else chunks[0]
