"""The v3.2 routes: HTTP in, a state operation, HTTP out (moto's ``responses.py``).

Request bodies are validated with surveykit's own request models after the platform's
leniency is applied: property names in any letter case (MetaData and Callback of email
excepted), unknown properties ignored, date-times without an offset read as UTC.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from datetime import datetime
from typing import Any, Final

from pydantic import ValidationError
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import BaseRoute, Route

from surveykit.models import (
    NOT_ACCEPTED_FOR_EMAIL,
    KeywordRequest,
    ResultsRequest,
    SendRequest,
    UrlRequest,
)
from surveykit.sandbox.http._streams import stop_on_shutdown
from surveykit.sandbox.http._wire import read_body, render, render_error, xml_booleans
from surveykit.sandbox.state import MAX_LINKS, SandboxState, User
from surveykit.sandbox.state._errors import (
    REJECTION_STATUS,
    Problem,
    Rejection,
    SandboxHTTPError,
    errors_of,
    validation,
)
from surveykit.sandbox.state._records import KeywordRecord, ShortLink, iso
from surveykit.sandbox.state._strict import (
    boolean_errors,
    import_list_errors,
    message_shape_errors,
)

Handler = Callable[[Request], Awaitable[Response]]

SEND_FIELDS: Final = (
    "source",
    "destination",
    "message",
    "reply",
    "when",
    "window",
    "lookup",
    "test",
    "timeout",
    "type",
    "onBehalf",
    "surveyId",
)
WINDOW_FIELDS: Final = ("from", "to", "days")
EMAIL_FIELDS: Final = ("To", "From", "Subject", "Content", "When", "Test", "Lookup")
KEYWORD_FIELDS: Final = ("keyword", "type", "response", "finishDate")
RESULTS_FIELDS: Final = ("format", "header", "since", "sortOrder", "surveyReference")
URL_FIELDS: Final = ("fullUrl", "tinyDomain", "reuse", "slashtag")
IMPORT_FIELDS: Final = ("reference", "list")
DATETIME_FIELDS: Final = frozenset({"when", "When", "since", "finishDate"})


def fold(body: Any, names: tuple[str, ...], what: str) -> dict[str, Any]:
    """Match property names without regard to case; drop the ones the schema lacks.

    Date-times without an offset are read as UTC (``Z`` is added).
    """
    if not isinstance(body, dict):
        raise validation({"": [f"The body must be a JSON object ({what})."]})
    by_lower = {name.lower(): name for name in names}
    out: dict[str, Any] = {}
    for key, value in body.items():
        name = by_lower.get(str(key).lower())
        if name is None or name in out:
            continue
        if name in DATETIME_FIELDS and isinstance(value, str) and _naive(value):
            value = value + "Z"
        out[name] = value
    return out


def _naive(value: str) -> bool:
    try:
        parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return False
    return parsed.tzinfo is None


def _user(request: Request) -> User:
    user: User = request.scope["sandbox.user"]
    return user


def _state(request: Request) -> SandboxState:
    state: SandboxState = request.app.sandbox_state
    return state


def api(handler: Handler) -> Handler:
    """Render the sandbox's error answers raised by a handler."""

    async def wrapped(request: Request) -> Response:
        try:
            return await handler(request)
        except SandboxHTTPError as error:
            return render_error(request, error)

    wrapped.__name__ = handler.__name__
    wrapped.__doc__ = handler.__doc__
    return wrapped


def answer(request: Request, root: str, operation: Callable[[], Any]) -> Response:
    """The operation's body with 200, or a :class:`Rejection`'s body with 400."""
    try:
        body = operation()
    except Rejection as refused:
        return render(request, refused.body, status=REJECTION_STATUS, root=root)
    return render(request, body, root=root)


def _xml_scalars(request: Request, body: Any) -> Any:
    # XML has only text: its true/false become booleans. A JSON body keeps its types, so a
    # boolean written as "true" there is the 400 the reference gives for a wrong type.
    media = request.headers.get("content-type", "").partition(";")[0].strip().lower()
    return xml_booleans(body) if "xml" in media else body


def _validate(model: Any, data: Mapping[str, Any]) -> Any:
    wrong = boolean_errors(model, data)
    if wrong:
        raise validation(wrong)
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise validation(errors_of(exc)) from None


# --------------------------------------------------------------------------- Message


def parse_send_request(body: Any) -> SendRequest:
    """A MessageModel body, read with the platform's leniency, as a :class:`SendRequest`.

    Also used for the send requests receivers answer Message/Keyword callbacks with.
    Raises the 400 validation error the route answers.
    """
    data = fold(body, SEND_FIELDS, "MessageModel")
    window = data.get("window")
    if isinstance(window, list):
        data["window"] = [
            fold(w, WINDOW_FIELDS, "Window") if isinstance(w, dict) else w for w in window
        ]
    wrong = message_shape_errors(data)
    if wrong:
        raise validation(wrong)
    message: SendRequest = _validate(SendRequest, data)
    return message


@api
async def send_message(request: Request) -> Response:
    """POST /v3.2/Message."""
    message = parse_send_request(await read_body(request))
    state, user = _state(request), _user(request)
    return answer(request, "SendResponse", lambda: state.send_message(message, user))


@api
async def send_email(request: Request) -> Response:
    """POST /v3.2/Message/SendEmail."""
    user = _user(request)
    if not user.can_email:
        raise Problem(
            403, "The account needs one of the roles sa, Admin or Organization to send email."
        )
    body = await read_body(request)
    if not isinstance(body, dict):
        raise validation({"": ["The body must be a JSON object (email request)."]})
    by_lower = {name.lower(): name for name in EMAIL_FIELDS}
    data: dict[str, Any] = {}
    for key, value in body.items():
        text = str(key)
        if text in ("MetaData", "Callback"):
            data[text] = value  # case-sensitive, as the reference says
        elif text.lower() in by_lower:
            name = by_lower[text.lower()]
            if name == "When" and isinstance(value, str) and _naive(value):
                value = value + "Z"
            data.setdefault(name, value)
        elif text.replace("_", "").lower() in NOT_ACCEPTED_FOR_EMAIL:
            data[text] = value  # refused by the model with its reason
    state = _state(request)
    return answer(request, "SendResponse", lambda: state.send_email(data, user))


@api
async def lookup(request: Request) -> Response:
    """GET /v3.2/Message/Lookup/{number}."""
    state, number = _state(request), request.path_params["number"]
    return answer(request, "LookupResponse", lambda: state.lookup(number))


# --------------------------------------------------------------------------- Data


@api
async def import_data(request: Request) -> Response:
    """POST /v3.2/Data/Import."""
    data = fold(await read_body(request), IMPORT_FIELDS, "ImportDataModel")
    reference, records = data.get("reference"), data.get("list")
    errors: dict[str, list[str]] = {}
    if not isinstance(reference, str) or not reference.strip():
        errors["reference"] = ["The reference field is required (at least 1 character)."]
    if not isinstance(records, list):
        errors["list"] = ["The list field is required: an array of records."]
    else:
        errors.update(import_list_errors(records))
    if errors:
        raise validation(errors)
    assert isinstance(reference, str) and isinstance(records, list)
    out = _state(request).import_records(reference, records)
    return render(request, out, root="ImportResponse", item="ImportResponse")


# --------------------------------------------------------------------------- Keyword


def _keyword_request(data: dict[str, Any]) -> KeywordRequest:
    request: KeywordRequest = _validate(KeywordRequest, data)
    return request


@api
async def create_keyword(request: Request) -> Response:
    """POST /v3.2/Keyword."""
    body = _keyword_request(fold(await read_body(request), KEYWORD_FIELDS, "KeywordModel"))
    state = _state(request)
    now = state.now()
    record = KeywordRecord(
        keyword=body.keyword.upper(),
        type=body.type,
        response=body.response,
        finish_date=body.finish_date,
        created=now,
        updated=now,
    )
    return render(request, state.create_keyword(record), root="KeywordModel")


@api
async def update_keyword(request: Request) -> Response:
    """PATCH /v3.2/Keyword."""
    body = _keyword_request(fold(await read_body(request), KEYWORD_FIELDS, "KeywordModel"))
    changes = {
        name: getattr(body, name)
        for name in body.model_fields_set
        if name in ("type", "response", "finish_date")
    }
    return render(
        request, _state(request).update_keyword(body.keyword, changes), root="KeywordModel"
    )


@api
async def delete_keyword(request: Request) -> Response:
    """DELETE /v3.2/Keyword?keyword=..."""
    name = request.query_params.get("keyword", "").strip()
    if not name:
        raise validation({"keyword": ["The keyword query parameter is required."]})
    return render(request, _state(request).delete_keyword(name), root="KeywordModel")


@api
async def list_keywords(request: Request) -> Response:
    """GET /v3.2/Keyword."""
    return render(request, _state(request).list_keywords(), item="KeywordModel")


# --------------------------------------------------------------------------- Survey


@api
async def get_results(request: Request) -> Response:
    """POST /v3.2/Survey/GetResults (streamed)."""
    from surveykit.sandbox.http._results import results_response  # pandas

    raw = _xml_scalars(request, await read_body(request, xml=True))
    data = fold(raw, RESULTS_FIELDS, "ResultsRequestModel")
    if isinstance(data.get("format"), str) and not data["format"].strip():
        data.pop("format")
    body: ResultsRequest = _validate(ResultsRequest, data)
    response = results_response(_state(request), body, layout=request.app.results_layout)
    # A client that leaves cancels the stream (Starlette listens for http.disconnect);
    # a server that shuts down stops it at the next chunk.
    response.body_iterator = stop_on_shutdown(response.body_iterator, request.app.stopping)
    return response


# --------------------------------------------------------------------------- TinyUrl


def link_body(request: Request, link: ShortLink) -> dict[str, Any]:
    """The body of a short link answer."""
    return {
        "shortUrl": short_url(request, link),
        "fullUrl": link.full_url,
        "slashtag": link.slashtag,
        "tinyDomain": link.domain,
        "created": iso(link.created),
        "clicks": link.clicks,
    }


def short_url(request: Request, link: ShortLink) -> str:
    """A link's address: its custom domain (https), else the sandbox's own host."""
    if link.domain:
        return f"https://{link.domain}/{link.code}"
    return f"{str(request.base_url).rstrip('/')}/{link.code}"


def _url_request(data: Any, where: str) -> UrlRequest:
    fields = fold(data, URL_FIELDS, "UrlModel")
    errors = boolean_errors(UrlRequest, fields)
    if not errors:
        try:
            return UrlRequest.model_validate(fields)
        except ValidationError as exc:
            errors = errors_of(exc)
    raise validation({f"{where}.{k}" if where else k: v for k, v in errors.items()})


@api
async def register(request: Request) -> Response:
    """POST /v3.2/TinyUrl/Register."""
    body = _xml_scalars(request, await read_body(request, xml=True))
    link = _state(request).register_link(_url_request(body, ""))
    return render(request, link_body(request, link), root="ShortLink")


@api
async def register_list(request: Request) -> Response:
    """POST /v3.2/TinyUrl/RegisterList: ``urls`` then ``urlList``, answered in order."""
    body = _xml_scalars(request, await read_body(request, xml=True, lists=("urls", "urlList")))
    data = fold(body, ("urls", "urlList"), "UrlListModel")
    items: list[tuple[str, Any]] = []
    for name in ("urls", "urlList"):
        value = data.get(name)
        if value is None:
            continue
        if not isinstance(value, list):
            raise validation({name: ["Must be an array of UrlModel."]})
        items.extend((f"{name}[{i}]", item) for i, item in enumerate(value))
    if len(items) > MAX_LINKS:
        raise validation({"urls": [f"At most {MAX_LINKS} URLs per request, got {len(items)}."]})
    requests = [_url_request(item, where) for where, item in items]
    state = _state(request)
    links = [link_body(request, state.register_link(r)) for r in requests]
    return render(request, links, item="ShortLink")


async def follow(request: Request) -> Response:
    """GET /{code}: a short link on the sandbox's host; 302 to the full URL."""
    state = _state(request)
    code = request.path_params["code"]
    link = state.find_link(request.url.hostname, code)
    if link is None:
        return render_error(request, Problem(404, f"No short link {code!r}."))
    if request.method == "HEAD":
        return RedirectResponse(link.full_url, status_code=302)  # link previews: not a click
    return RedirectResponse(state.click(link, str(request.url)), status_code=302)


# --------------------------------------------------------------------------- Webhook


@api
async def list_webhooks(request: Request) -> Response:
    """GET /v3.2/Webhook."""
    return render(request, _state(request).webhook_list(), item="WebHookModel")


def routes() -> list[BaseRoute]:
    """The route table of the v3.2 reference."""
    return [
        Route("/v3.2/Data/Import", import_data, methods=["POST"]),
        Route("/v3.2/Keyword", create_keyword, methods=["POST"]),
        Route("/v3.2/Keyword", update_keyword, methods=["PATCH"]),
        Route("/v3.2/Keyword", delete_keyword, methods=["DELETE"]),
        Route("/v3.2/Keyword", list_keywords, methods=["GET"]),
        Route("/v3.2/Message", send_message, methods=["POST"]),
        Route("/v3.2/Message/SendEmail", send_email, methods=["POST"]),
        Route("/v3.2/Message/Lookup/{number}", lookup, methods=["GET"]),
        Route("/v3.2/Survey/GetResults", get_results, methods=["POST"]),
        Route("/v3.2/TinyUrl/Register", register, methods=["POST"]),
        Route("/v3.2/TinyUrl/RegisterList", register_list, methods=["POST"]),
        Route("/v3.2/Webhook", list_webhooks, methods=["GET"]),
    ]


def link_routes() -> list[BaseRoute]:
    """Short links on the sandbox's own host (matched last)."""
    return [Route("/{code}", follow, methods=["GET", "HEAD"])]
