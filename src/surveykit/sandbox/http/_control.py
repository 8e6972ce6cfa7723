"""The control API under ``/_sandbox`` (admin token): what the Python methods do, over HTTP.

========================================  ==============================================
``POST /_sandbox/reset``                  back to the sample data and the start time
``GET  /_sandbox/journal``                ``?kind=request|message|email|inbound&path=&after=``
``GET  /_sandbox/events``                 ``?type=Receipt&after=``: callback payloads
``GET  /_sandbox/clock``                  ``{"now": ...}``
``POST /_sandbox/clock/advance``          ``{"seconds": 3600}`` or ``{"to": "<ISO time>"}``
``GET/POST/DELETE /_sandbox/faults``      list, add (``{"route", "method", "status", "rate",
                                          "latency", "drop", "times", "retryAfter"}``), clear
``POST /_sandbox/simulate/reply``         ``{"from": "447700900123", "text": "STOP", "to": null}``
``POST /_sandbox/simulate/answers``       ``{"surveyReference", "respondent", "answers"}``
``POST /_sandbox/simulate/click``         ``{"url": "http://127.0.0.1:8765/Ab3dE9x", "by": null}``
``POST /_sandbox/simulate/status``        ``{"messageId": "MS…", "status": "Read"}`` (carrier)
``GET/POST/DELETE /_sandbox/callback``    the account callback: show, set (``{"Url", "Method",
                                          "Retries", "Timeout", "TotalTimeout", "Action",
                                          "ContentType", "Secret"}``), remove
``POST /_sandbox/deliveries/wait``        ``{"timeout": 30}``: until queued callbacks are done
``GET/POST/DELETE /_sandbox/stoplist``    list, add ``{"address"}``, remove ``?address=``
``POST /_sandbox/surveys/generate``       ``{"reference", "rows", "questions", "seed", "nasty",
                                          "surveyId", "wave", "design"}``: a generated
                                          survey
``GET  /_sandbox/surveys/{ref}/codebook`` the survey's codebook (``sk.Codebook.to_dict()``)
``GET  /_sandbox/tokens``                 the admin and restricted tokens
========================================  ==============================================
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from datetime import UTC, datetime, timedelta
from typing import Any
from urllib.parse import urlsplit

import anyio.to_thread
from pydantic import ValidationError
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Route

from surveykit.models import CallbackSettings
from surveykit.sandbox.data._seed import generated_survey
from surveykit.sandbox.http._wire import loads_json
from surveykit.sandbox.state import SandboxState, callback_target
from surveykit.sandbox.state import _fields as fields
from surveykit.sandbox.state._errors import errors_of, problem_body
from surveykit.sandbox.state._records import SECRET_MASK, iso
from surveykit.sandbox.state._schedule import MAX_ADVANCE

MAX_WAIT = 3600.0
"""The longest ``deliveries/wait`` timeout, in seconds."""

Handler = Callable[[Request], Awaitable[Response]]


def _state(request: Request) -> SandboxState:
    state: SandboxState = request.app.sandbox_state
    return state


def _bad(detail: str, status: int = 400) -> Response:
    return JSONResponse(problem_body(status, detail), status_code=status)


async def _json(request: Request) -> dict[str, Any]:
    raw = await request.body()
    if not raw.strip():
        return {}
    value = loads_json(raw)
    if not isinstance(value, dict):
        raise ValueError("the body must be a JSON object")
    return value


def control(handler: Handler) -> Handler:
    """Turn ``ValueError``/``KeyError`` of a control call into a 400 ProblemDetails."""

    async def wrapped(request: Request) -> Response:
        try:
            return await handler(request)
        except (ValueError, KeyError, TypeError) as exc:
            return _bad(str(exc.args[0]) if exc.args else str(exc))

    wrapped.__name__ = handler.__name__
    return wrapped


def _after(request: Request) -> int:
    text = request.query_params.get("after", "0")
    try:
        return int(text)
    except ValueError:
        raise ValueError(f"after: expected a whole number, got {text[:40]!r}") from None


def journal_entries(
    state: SandboxState, kind: str | None = None, path: str | None = None, after: int = 0
) -> list[dict[str, Any]]:
    """Journal entries as JSON, filtered by kind, path (exact) and sequence number."""
    with state.transaction():
        entries = state.refused if kind == "refused" else state.journal
        return [
            entry.to_json()
            for entry in entries
            if entry.seq > after
            and (kind is None or entry.kind == kind)
            and (path is None or entry.path == path)
        ]


@control
async def reset(request: Request) -> Response:
    """POST /_sandbox/reset."""
    _state(request).reset()
    return JSONResponse({"now": iso(_state(request).now())})


@control
async def journal(request: Request) -> Response:
    """GET /_sandbox/journal."""
    q = request.query_params
    return JSONResponse(
        journal_entries(_state(request), q.get("kind"), q.get("path"), _after(request))
    )


@control
async def events(request: Request) -> Response:
    """GET /_sandbox/events."""
    q = request.query_params
    after, kind = _after(request), q.get("type")
    state = _state(request)
    with state.transaction():
        out = [
            {"seq": e.seq, "callbackUrls": e.callback_urls, "delivered": e.delivered, **e.payload()}
            for e in state.events
            if e.seq > after and (kind is None or e.type == kind)
        ]
    return JSONResponse(out)


@control
async def clock(request: Request) -> Response:
    """GET /_sandbox/clock."""
    return JSONResponse({"now": iso(_state(request).now())})


@control
async def advance(request: Request) -> Response:
    """POST /_sandbox/clock/advance."""
    body = await _json(request)
    fields.known(body, ("seconds", "to"))
    state = _state(request)
    limit = MAX_ADVANCE.total_seconds()
    if "to" in body and "seconds" in body:
        raise ValueError("seconds, to: give one of them, not both")
    if "to" in body:
        text = fields.text("to", body["to"], max_length=64)
        assert text is not None
        try:
            target = datetime.fromisoformat(text.replace("Z", "+00:00"))
        except ValueError:
            raise ValueError(f"to: expected an ISO 8601 date-time, got {text!r}") from None
        if target.tzinfo is None:
            target = target.replace(tzinfo=UTC)
        delta = target - state.now()
        if not timedelta(0) <= delta <= MAX_ADVANCE:
            raise ValueError(
                f"to: expected a time from now ({iso(state.now())}) to {limit:g} s later, "
                f"got {text!r}"
            )
    else:
        seconds = fields.number("seconds", body.get("seconds", 0), low=0, high=limit)
        delta = timedelta(seconds=seconds or 0)
    return JSONResponse({"now": iso(state.advance(delta))})


@control
async def faults(request: Request) -> Response:
    """GET, POST and DELETE /_sandbox/faults."""
    state = _state(request)
    if request.method == "DELETE":
        state.faults.clear()
        return JSONResponse([])
    if request.method == "POST":
        body = await _json(request)
        names = {
            "route": "route",
            "method": "method",
            "status": "status",
            "rate": "rate",
            "latency": "latency",
            "drop": "drop",
            "times": "times",
            "retryAfter": "retry_after",
        }
        fields.known(body, names)
        fault = state.faults.add(**{names[k]: v for k, v in body.items()})
        return JSONResponse(fault.wire())
    with state.lock:
        return JSONResponse([fault.wire() for fault in state.faults])


@control
async def simulate_reply(request: Request) -> Response:
    """POST /_sandbox/simulate/reply."""
    body = await _json(request)
    fields.known(body, ("from", "text", "to"))
    sender = fields.text("from", fields.required(body, "from"), max_length=64)
    text = fields.text("text", fields.required(body, "text"), max_length=10_000)
    to = fields.text("to", body.get("to"), optional=True, max_length=64)
    assert sender is not None and text is not None
    event = _state(request).reply(sender, text, to)
    return JSONResponse({"seq": event.seq, **event.payload()})


@control
async def simulate_answers(request: Request) -> Response:
    """POST /_sandbox/simulate/answers."""
    body = await _json(request)
    fields.known(body, ("surveyReference", "respondent", "answers"))
    reference = fields.text("surveyReference", fields.required(body, "surveyReference"))
    who = fields.text("respondent", body.get("respondent"), optional=True, max_length=256)
    answers = body.get("answers")
    if answers is not None and (
        not isinstance(answers, dict)
        or any(isinstance(v, dict | list | bool) for v in answers.values())
    ):
        raise ValueError(
            "answers: expected an object of question keys to answers (text, a number "
            f"or null), got {str(answers)[:80]}"
        )
    assert reference is not None
    respondent = _state(request).answers(reference, who, answers)
    return JSONResponse({"respondentId": respondent})


@control
async def simulate_click(request: Request) -> Response:
    """POST /_sandbox/simulate/click."""
    body = await _json(request)
    fields.known(body, ("url", "by"))
    url = fields.text("url", fields.required(body, "url"))
    by = fields.text("by", body.get("by"), optional=True, max_length=256)
    assert url is not None
    parts = urlsplit(url)
    state = _state(request)
    link = state.find_link(parts.hostname, parts.path.strip("/"))
    if link is None:
        return _bad(f"no short link {url!r}", 404)
    full_url = state.click(link, url, by)
    return JSONResponse({"fullUrl": full_url, "clicks": link.clicks})


@control
async def simulate_status(request: Request) -> Response:
    """POST /_sandbox/simulate/status: a carrier progress Receipt."""
    body = await _json(request)
    fields.known(body, ("messageId", "status"))
    message_id = fields.text("messageId", fields.required(body, "messageId"), max_length=64)
    status = fields.text("status", fields.required(body, "status"), max_length=64)
    assert message_id is not None and status is not None
    event = _state(request).carrier_status(message_id, status)
    return JSONResponse({"seq": event.seq, **event.payload()})


_CALLBACK_NAMES = {
    "url": "Url",
    "method": "Method",
    "retries": "Retries",
    "timeout": "Timeout",
    "totaltimeout": "TotalTimeout",
    "action": "Action",
    "contenttype": "ContentType",
    "secret": "Secret",
}


@control
async def account_callback(request: Request) -> Response:
    """GET, POST and DELETE /_sandbox/callback: the account-level callback settings."""
    state = _state(request)
    if request.method == "DELETE":
        state.set_account_callback(None)
    elif request.method == "POST":
        body = await _json(request)
        unknown = sorted(k for k in body if k.lower() not in _CALLBACK_NAMES)
        if unknown:
            raise ValueError(f"unknown callback settings: {unknown}")
        named = {_CALLBACK_NAMES[k.lower()]: v for k, v in body.items()}
        secret = named.pop("Secret", None)
        if secret == SECRET_MASK:
            # The masked value GET shows: posting the settings back keeps the secret.
            with state.lock:
                secret = state.account_callback.secret if state.account_callback else None
            if secret is None:
                raise ValueError("Secret: give the secret itself, not the mask")
        try:
            settings = CallbackSettings.model_validate(named)
        except ValidationError as exc:
            problems = "; ".join(f"{k}: {' '.join(v)}" for k, v in errors_of(exc).items())
            raise ValueError(problems) from None
        state.set_account_callback(callback_target(settings, secret=secret))
    with state.lock:
        target = state.account_callback
        return JSONResponse(target.wire() if target else None)


@control
async def wait_deliveries(request: Request) -> Response:
    """POST /_sandbox/deliveries/wait: block until queued callbacks are delivered."""
    body = await _json(request)
    fields.known(body, ("timeout",))
    timeout = fields.number("timeout", body.get("timeout", 30), low=0, high=MAX_WAIT) or 0.0
    delivery = request.app.sandbox_delivery
    if delivery is None:
        return JSONResponse({"pending": 0})
    # In a worker thread: the event loop keeps serving (a receiver may call us back).
    done = await anyio.to_thread.run_sync(delivery.wait, timeout)
    if not done:
        return _bad(
            f"{delivery.pending} callback deliveries still pending after {timeout:g} s", 504
        )
    return JSONResponse({"pending": 0})


@control
async def stoplist(request: Request) -> Response:
    """GET, POST and DELETE /_sandbox/stoplist."""
    state = _state(request)
    if request.method == "POST":
        body = await _json(request)
        fields.known(body, ("address",))
        address = fields.text("address", fields.required(body, "address"), max_length=320)
        assert address is not None
        state.add_stop(address)
    elif request.method == "DELETE":
        if not request.query_params.get("address", "").strip():
            raise ValueError("address: the query parameter is required")
        state.remove_stop(request.query_params["address"])
    with state.lock:
        return JSONResponse(sorted(state.stop_list))


_GENERATE_NAMES = {
    "reference": "reference",
    "rows": "rows",
    "questions": "questions",
    "seed": "seed",
    "nasty": "nasty",
    "surveyId": "survey_id",
    "wave": "wave",
    "design": "design",
}
"""The body of ``surveys/generate``: the parameters of ``Sandbox.add_generated_survey``."""


@control
async def generate_survey(request: Request) -> Response:
    """POST /_sandbox/surveys/generate: add a generated benchmark survey."""
    body = await _json(request)
    unknown = sorted(set(body) - set(_GENERATE_NAMES))
    if unknown:
        raise ValueError(f"unknown settings: {unknown} (known: {', '.join(_GENERATE_NAMES)})")
    for name in ("reference", "rows"):
        if name not in body:
            raise ValueError(f"{name}: required")
    state = _state(request)
    arguments = {_GENERATE_NAMES[key]: value for key, value in body.items()}
    if arguments.get("seed") is None:
        arguments["seed"] = state.seed
    try:
        survey = generated_survey(**arguments)
    except ValueError as exc:
        # The errors name Python's parameters; answer with the names of this body.
        field, sep, rest = str(exc).partition(":")
        python_names = {python: wire for wire, python in _GENERATE_NAMES.items()}
        raise ValueError(f"{python_names.get(field, field)}{sep}{rest}") from None
    state.put_survey(survey)
    return JSONResponse(
        {
            "reference": survey.reference,
            "surveyId": survey.survey_id,
            "rows": survey.generated_rows,
            "questions": len(survey.questions),
            "seed": survey.generated_seed,
            "nasty": survey.generated_nasty,
            "wave": survey.generated_wave,
            "design": survey.generated_design,
        }
    )


@control
async def survey_codebook(request: Request) -> Response:
    """GET /_sandbox/surveys/{reference}/codebook: the survey's codebook (``Codebook.to_dict``)."""
    from surveykit.sandbox.data._codebook import survey_codebook as derive

    reference = request.path_params["reference"]
    state = _state(request)
    with state.transaction():
        survey = state.find_survey(reference)
    if survey is None:
        return _bad(f"No survey has the reference {reference!r}.", 404)
    return JSONResponse(derive(survey).to_dict())


@control
async def tokens(request: Request) -> Response:
    """GET /_sandbox/tokens."""
    users = _state(request).users.values()
    return JSONResponse({user.name: user.token for user in users})


def routes() -> list[BaseRoute]:
    """The control routes."""
    return [
        Route("/_sandbox/reset", reset, methods=["POST"]),
        Route("/_sandbox/journal", journal, methods=["GET"]),
        Route("/_sandbox/events", events, methods=["GET"]),
        Route("/_sandbox/clock", clock, methods=["GET"]),
        Route("/_sandbox/clock/advance", advance, methods=["POST"]),
        Route("/_sandbox/faults", faults, methods=["GET", "POST", "DELETE"]),
        Route("/_sandbox/simulate/reply", simulate_reply, methods=["POST"]),
        Route("/_sandbox/simulate/answers", simulate_answers, methods=["POST"]),
        Route("/_sandbox/simulate/click", simulate_click, methods=["POST"]),
        Route("/_sandbox/simulate/status", simulate_status, methods=["POST"]),
        Route("/_sandbox/callback", account_callback, methods=["GET", "POST", "DELETE"]),
        Route("/_sandbox/deliveries/wait", wait_deliveries, methods=["POST"]),
        Route("/_sandbox/stoplist", stoplist, methods=["GET", "POST", "DELETE"]),
        Route("/_sandbox/surveys/generate", generate_survey, methods=["POST"]),
        Route("/_sandbox/surveys/{reference}/codebook", survey_codebook, methods=["GET"]),
        Route("/_sandbox/tokens", tokens, methods=["GET"]),
    ]
