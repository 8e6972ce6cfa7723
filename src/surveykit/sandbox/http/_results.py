"""GetResults: the wide results table, built and encoded in chunks, streamed.

The layout is ``docs/results-format.md``'s: the respondent columns
(:data:`surveykit.results.RESPONDENT_COLUMNS`) then one column per question key (``Q1``,
``Q2``...), every value the platform's text. ``sortOrder`` is the number of questions the
respondent has answered. When a generated survey draws a panel's design (``design=True``),
the design columns (:data:`surveykit.results.DESIGN_COLUMNS`) come between the two; other
respondents leave them missing. Rows are read from the state ``CHUNK_ROWS`` at a time
under the lock and encoded by :func:`surveykit.results.write_results`, so a large survey
never sits in memory as one payload. Generated (benchmark) surveys are drawn chunk by chunk from
:func:`surveykit.sandbox.generator.generate_results`.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from datetime import datetime
from typing import Any, Final

import pandas as pd
from starlette.responses import StreamingResponse

from surveykit.models import ResultsRequest
from surveykit.results import DESIGN_COLUMNS, RESPONDENT_COLUMNS, write_results
from surveykit.sandbox.generator import generate_results
from surveykit.sandbox.state import SandboxState
from surveykit.sandbox.state._records import Respondent, Survey, iso

CHUNK_ROWS: Final = 20_000
STRING: Final = pd.StringDtype("pyarrow")

MEDIA_TYPES: Final = {
    "CSV": "text/csv; charset=utf-8",
    "PIPE": "text/plain; charset=utf-8",
    "TAB": "text/tab-separated-values; charset=utf-8",
    "XML": "application/xml; charset=utf-8",
    "JSON": "application/json; charset=utf-8",
}
"""The Content-Type of each results format (the format decides, not the Accept header)."""


def _natural(key: str) -> tuple[Any, ...]:
    return tuple(int(part) if part.isdigit() else part for part in re.split(r"(\d+)", key))


def question_keys(surveys: Sequence[Survey]) -> list[str]:
    """The question columns: every key of the surveys, in natural order (Q2 before Q10)."""
    keys: set[str] = set()
    for survey in surveys:
        keys.update(q.key for q in survey.questions)
        if survey.generated_rows:
            keys.update(f"Q{i}" for i in range(1, len(survey.questions) + 1))
    return sorted(keys, key=_natural)


def _row(respondent: Respondent, questions: Sequence[str], design: int) -> list[str | None]:
    """A stored respondent's row (``design`` missing design fields before the answers)."""
    answered = sum(1 for value in respondent.answers.values() if value is not None)
    return [
        respondent.respondent_id,
        respondent.survey_reference,
        respondent.title,
        respondent.first_name,
        respondent.last_name,
        respondent.mobile_number,
        respondent.email_address,
        respondent.channel,
        iso(respondent.invited),
        iso(respondent.started),
        iso(respondent.completed),
        str(answered),
        *([None] * design),
        *(respondent.answers.get(key) for key in questions),
    ]


def _respondent_columns(surveys: Sequence[Survey]) -> list[str]:
    """The respondent fields, then the design fields when a survey draws a design."""
    design = any(s.generated_rows and s.generated_design for s in surveys)
    return [*RESPONDENT_COLUMNS, *(DESIGN_COLUMNS if design else ())]


def _keep(respondent: Respondent, since: datetime | None, min_answered: int) -> bool:
    if since is not None and respondent.updated < since:
        return False
    return min_answered <= 1 or len(respondent.answers) >= min_answered


def _frame(rows: list[list[str | None]], columns: Sequence[str]) -> pd.DataFrame:
    data = {
        name: pd.array([row[i] for row in rows], dtype=STRING) for i, name in enumerate(columns)
    }
    return pd.DataFrame(data, columns=list(columns))


def _generated(
    survey: Survey, columns: Sequence[str], since: datetime | None, min_answered: int
) -> Iterator[pd.DataFrame]:
    for chunk in generate_results(
        survey.generated_rows,
        seed=survey.generated_seed,
        questions=len(survey.questions),
        nasty=survey.generated_nasty,
        chunk_rows=CHUNK_ROWS,
        wave=survey.generated_wave,
        design=survey.generated_design,
    ):
        chunk = chunk.assign(
            surveyReference=pd.array([survey.reference] * len(chunk), dtype=STRING)
        )
        if min_answered > 1:
            chunk = chunk[chunk["sortOrder"].astype("int64") >= min_answered]
        if since is not None:
            latest = pd.concat(
                [
                    pd.to_datetime(chunk[c], utc=True, format="ISO8601")
                    for c in ("invited", "started", "completed")
                ],
                axis=1,
            ).max(axis=1)
            chunk = chunk[latest >= since]
        yield chunk.reindex(columns=list(columns)).astype(STRING).reset_index(drop=True)


def result_frames(
    state: SandboxState, reference: str, since: datetime | None, sort_order: int | None
) -> Iterator[pd.DataFrame]:
    """The results table in chunks (at least one frame, so the header is always known)."""
    surveys, ids = state.result_ids(reference)
    questions = question_keys(surveys)
    fields = _respondent_columns(surveys)
    columns = [*fields, *questions]
    min_answered = sort_order or 1
    yield _frame([], columns)
    for start in range(0, len(ids), CHUNK_ROWS):
        with state.lock:
            rows = []
            for respondent_id in ids[start : start + CHUNK_ROWS]:
                respondent = state.respondents.get(respondent_id)
                if respondent is not None and _keep(respondent, since, min_answered):
                    rows.append(_row(respondent, questions, len(fields) - len(RESPONDENT_COLUMNS)))
        if rows:
            yield _frame(rows, columns)
    for survey in surveys:
        if survey.generated_rows:
            yield from _generated(survey, columns, since, min_answered)


def results_response(
    state: SandboxState, request: ResultsRequest, *, layout: str = "documented"
) -> StreamingResponse:
    """The streamed GetResults answer in the requested format and layout."""
    # Resolve the reference now, so an unknown one is a 404 before streaming starts.
    state.result_ids(request.survey_reference)
    fmt = request.format.value
    frames = result_frames(state, request.survey_reference, request.since, request.sort_order)
    body = write_results(
        frames, fmt, header=request.header is not False, chunk_rows=CHUNK_ROWS, layout=layout
    )
    return StreamingResponse(body, media_type=MEDIA_TYPES[fmt])
