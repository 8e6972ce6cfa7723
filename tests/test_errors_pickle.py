"""Every public exception travels: pickled and unpickled with its type, message and fields.

multiprocessing, concurrent.futures and joblib send a worker's exception back pickled; an
exception whose ``__init__`` takes keyword-only fields cannot be rebuilt from its ``args``
by pickle's default, so ``pickle.loads`` raised ``TypeError`` for every API error.
"""

from __future__ import annotations

import multiprocessing
import pickle
from concurrent.futures import ProcessPoolExecutor
from typing import Any

import httpx
import pandas as pd
import pytest

import surveykit as sk
from surveykit import errors
from surveykit.batch import BatchResult
from surveykit.models import LookupResponse, ProblemDetails, SendResponse

URL = "https://api.example.test/v3.2/messages"


def request() -> httpx.Request:
    return httpx.Request("POST", URL, json={"Destination": "447700900123"})


def response(status: int, body: Any) -> httpx.Response:
    return httpx.Response(status, json=body, request=request())


PROBLEM = {"type": "about:blank", "title": "Bad", "status": 400, "detail": "no"}
SENT = {"MessageID": "Unknown", "Status": "Blocked", "Reachable": False}
LOOKED = {"messageID": "Unknown", "status": "Error", "carrier": "Unknown"}


def status_fields(status: int, body: Any = PROBLEM) -> dict[str, Any]:
    fields: dict[str, Any] = {"response": response(status, body), "body": body}
    if body is PROBLEM:
        fields["problem"] = ProblemDetails.model_validate(body)
    return fields


def not_found() -> sk.NotFoundError:
    error = sk.NotFoundError("GET x -> 404: no such survey", **status_fields(404))
    error.suggestions = ("CSAT-2026", "CSAT-2025")
    return error


def frame() -> pd.DataFrame:
    return pd.DataFrame({"destination": ["447700900123"], "outcome": ["sent"]}, index=[7])


#: One instance of each public exception, every field of its ``__init__`` given.
SAMPLES: dict[str, Any] = {
    "SurveykitError": lambda: sk.SurveykitError("base"),
    "ConfigurationError": lambda: sk.ConfigurationError("base_url: expected an http(s) URL"),
    "ValidationError": lambda: sk.ValidationError(
        [("destination", "destination: not E.164."), ("source", "source: empty.")]
    ),
    "ColumnMappingError": lambda: sk.ColumnMappingError("two columns map to Phone"),
    "AnalysisInputError": lambda: sk.AnalysisInputError("q1: text answers"),
    "APIConnectionError": lambda: sk.APIConnectionError("could not connect", request=request()),
    "APITimeoutError": lambda: sk.APITimeoutError("timed out", request=request()),
    "OutcomeUnknownError": lambda: sk.OutcomeUnknownError(
        "ReadTimeout after the request may have reached the platform",
        request=request(),
        cause=httpx.ReadTimeout("read timed out", request=request()),
    ),
    "APIStatusError": lambda: sk.APIStatusError("418", **status_fields(418)),
    "BadRequestError": lambda: sk.BadRequestError("400", **status_fields(400)),
    "SendRejectedError": lambda: sk.SendRejectedError(
        "send rejected (Status Blocked)",
        response=response(400, SENT),
        body=SENT,
        send_response=SendResponse.model_validate(SENT),
    ),
    "LookupFailedError": lambda: sk.LookupFailedError(
        "lookup failed (status Error)",
        response=response(400, LOOKED),
        body=LOOKED,
        lookup_response=LookupResponse.model_validate(LOOKED),
    ),
    "AuthenticationError": lambda: sk.AuthenticationError("401", **status_fields(401)),
    "PermissionDeniedError": lambda: sk.PermissionDeniedError("403", **status_fields(403)),
    "NotFoundError": not_found,
    "ConflictError": lambda: sk.ConflictError("409", **status_fields(409)),
    "RateLimitError": lambda: sk.RateLimitError(
        "429", **status_fields(429), retry_after=2.5
    ),
    "ServerError": lambda: sk.ServerError("502", **status_fields(502, "<h1>Bad Gateway</h1>")),
    "ServerOutcomeUnknownError": lambda: sk.ServerOutcomeUnknownError(
        "504; it may have been acted on", **status_fields(504, None)
    ),
    "UnexpectedResponseError": lambda: sk.UnexpectedResponseError(
        "the body is not JSON", **status_fields(200, "<html>")
    ),
    "ResultsParseError": lambda: sk.ResultsParseError(
        "unclosed quote", format="CSV", offset=120, line=3, record=1
    ),
    "TemplateError": lambda: sk.TemplateError("{name}: no such column"),
    "JournalError": lambda: sk.JournalError("run.journal", "the file is empty"),
    "JournalMismatchError": lambda: sk.JournalMismatchError(
        "run.journal", "written by another batch"
    ),
    "JournalLockedError": lambda: sk.JournalLockedError(
        "run.journal",
        {"pid": 4242, "host": "box", "since": "2026-11-26T13:00:00Z"},
        1.5,
    ),
    "DispositionError": lambda: sk.DispositionError("'5.1' is not an AAPOR disposition code"),
    "BatchInterrupted": lambda: sk.BatchInterrupted(
        BatchResult(frame(), sent_now=1, journal="run.journal", requested_now=1)
    ),
    "StoreClosedError": lambda: sk.StoreClosedError("closed"),
    "CodebookError": lambda: sk.CodebookError("row 3: no label"),
    "LabelError": lambda: sk.LabelError("q1: 9 is not a code", column="q1", row=7, value=9),
    "ExportError": lambda: sk.ExportError("Stata: name too long"),
    "RakingError": lambda: sk.RakingError("no such level", column="age", level="90+", row=3),
    "RakingConvergenceError": lambda: sk.RakingConvergenceError(
        "not met", column="age", level="18-24", gap=0.02, weights=pd.Series([1.0, 2.5])
    ),
    "WeightsError": lambda: sk.WeightsError("weights sum to zero"),
    "PlotError": lambda: sk.PlotError("q9: no answers"),
    "OptOutError": lambda: sk.OptOutError("not a number or address"),
    "ImportStoppedError": lambda: sk.ImportStoppedError(
        "import stopped at a 404", result=frame(), cause=not_found()
    ),
}


def test_every_public_exception_has_a_sample() -> None:
    assert sorted(SAMPLES) == sorted(errors.__all__)


def same(left: Any, right: Any) -> bool:
    """Whether a field survived the trip (httpx and pandas objects compare by content)."""
    if type(left) is not type(right):
        return False
    if isinstance(left, httpx.Request):
        return (left.method, left.url, left.headers.multi_items(), left.content) == (
            right.method,
            right.url,
            right.headers.multi_items(),
            right.content,
        )
    if isinstance(left, httpx.Response):
        return (
            (left.status_code, left.headers.multi_items(), left.content)
            == (right.status_code, right.headers.multi_items(), right.content)
        ) and same(left.request, right.request)
    if isinstance(left, pd.DataFrame | pd.Series):
        return bool(left.equals(right))
    if isinstance(left, BatchResult):
        return same(left.frame, right.frame) and (
            left.sent_now,
            left.journal,
            left.requested_now,
        ) == (right.sent_now, right.journal, right.requested_now)
    if isinstance(left, BaseException):
        return str(left) == str(right) and same(vars(left), vars(right))
    if isinstance(left, dict):
        return left.keys() == right.keys() and all(same(left[k], right[k]) for k in left)
    return bool(left == right)


def assert_travelled(before: BaseException, after: BaseException) -> None:
    assert type(after) is type(before)
    assert str(after) == str(before)
    assert after.args == before.args
    assert vars(after).keys() == vars(before).keys()
    for name, value in vars(before).items():
        assert same(value, getattr(after, name)), f"{name} changed on the way"


@pytest.mark.parametrize("name", sorted(errors.__all__))
def test_every_public_exception_pickles_with_its_fields(name: str) -> None:
    error = SAMPLES[name]()
    assert isinstance(error, getattr(errors, name))
    for protocol in (2, pickle.HIGHEST_PROTOCOL):
        assert_travelled(error, pickle.loads(pickle.dumps(error, protocol=protocol)))


def test_fields_read_after_the_trip() -> None:
    error = pickle.loads(pickle.dumps(SAMPLES["ImportStoppedError"]()))
    assert error.cause.status_code == 404
    assert error.cause.suggestions == ("CSAT-2026", "CSAT-2025")
    assert error.cause.problem.detail == "no"
    assert error.cause.response.json() == PROBLEM
    assert error.result.index.tolist() == [7]
    validation = pickle.loads(pickle.dumps(SAMPLES["ValidationError"]()))
    assert validation.fields == ["destination", "source"]


def raise_in_worker(name: str) -> None:
    """Run in another process: raise the sample exception ``name``."""
    raise SAMPLES[name]()


def test_an_api_error_travels_back_from_a_process_pool() -> None:
    # spawn: a fresh interpreter, so nothing is shared but the pickled exception.
    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(max_workers=1, mp_context=context) as pool:
        future = pool.submit(raise_in_worker, "SendRejectedError")
        with pytest.raises(sk.SendRejectedError) as caught:
            future.result(timeout=60)
    assert_travelled(SAMPLES["SendRejectedError"](), caught.value)
    assert caught.value.send_response.status == "Blocked"
