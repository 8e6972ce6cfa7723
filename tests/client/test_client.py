"""The exact wire request of every v3.2 operation, and how its answer is read, in both clients."""

from __future__ import annotations

import inspect
import json
import logging
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import httpx
import pytest

import surveykit as sk
from surveykit.models import (
    ImportResult,
    ImportStatus,
    Keyword,
    LookupResponse,
    MessageType,
    NumberType,
    ResultsRequest,
    SendRequest,
    SendResponse,
    SendStatus,
    UrlListRequest,
    UrlRequest,
    Webhook,
    Window,
)

BASE = "https://api.example.test"
TOKEN = "tok-123"


@dataclass
class Wire:
    """A fake platform at the transport: records requests, answers from a queue."""

    answers: list[httpx.Response | Exception] = field(default_factory=list)
    requests: list[httpx.Request] = field(default_factory=list)

    def __call__(self, request: httpx.Request) -> httpx.Response:
        request.read()
        self.requests.append(request)
        answer = self.answers.pop(0) if len(self.answers) > 1 else self.answers[0]
        if isinstance(answer, Exception):
            raise answer
        # A fresh copy: a Response's stream can be consumed only once.
        return httpx.Response(answer.status_code, headers=answer.headers, content=answer.content)

    @property
    def last(self) -> httpx.Request:
        return self.requests[-1]


async def resolve(value: Any) -> Any:
    return await value if inspect.isawaitable(value) else value


@pytest.fixture(params=["sync", "async"])
def make_client(request: pytest.FixtureRequest) -> Callable[..., Any]:
    kind = request.param

    def make(wire: Wire, **options: Any) -> Any:
        options.setdefault("retry", sk.RetryPolicy(max_retries=2, backoff_base=0.0))
        if kind == "sync":
            return sk.Client(BASE, TOKEN, transport=httpx.MockTransport(wire), **options)
        return sk.AsyncClient(BASE, TOKEN, transport=httpx.MockTransport(wire), **options)

    return make


def body_of(request: httpx.Request) -> Any:
    return json.loads(request.content) if request.content else None


@dataclass
class Case:
    call: Callable[[Any], Any]
    method: str
    path: str
    body: Any
    answer: httpx.Response
    check: Callable[[Any], None]
    query: dict[str, str] = field(default_factory=dict)


WHEN = datetime(2026, 3, 2, 9, 30, tzinfo=UTC)


def check_import(result: Any) -> None:
    assert [type(r) for r in result] == [ImportResult, ImportResult]
    assert result[0].status is ImportStatus.SUCCESS and result[0].ok
    assert result[1].status is ImportStatus.ERROR and result[1].message == "invalid mobile"
    assert result[0].first_name == "Zoë"


def check_keyword(result: Any) -> None:
    assert isinstance(result, Keyword)
    assert result.keyword == "SURVEY"
    assert result.finish_date == WHEN


def check_keyword_list(result: Any) -> None:
    assert [k.keyword for k in result] == ["SURVEY", "STOPNOW"]
    assert result[0].type == "survey"


def check_lookup(result: Any) -> None:
    assert isinstance(result, LookupResponse)
    assert result.message_id == "MS42"
    assert result.number_type is NumberType.MOBILE and result.reachable is True
    assert result.carrier == "Vodafone UK"


def check_send(result: Any) -> None:
    assert isinstance(result, SendResponse)
    assert result.message_id == "MS1001" and result.created
    assert result.status is SendStatus.SENT  # sent in lowercase on the wire


def check_email(result: Any) -> None:
    assert result.status is SendStatus.SENT and result.number_type is NumberType.UNKNOWN


def check_webhooks(result: Any) -> None:
    assert [type(w) for w in result] == [Webhook]
    hook = result[0]
    assert hook.url == "https://hooks.example.org/in" and hook.is_active is True
    assert hook.events == ["All"] and hook.timeout == 30000
    assert "s3cret" not in repr(hook)


CASES = {
    "data-import": Case(
        lambda c: c.data.import_records(
            "CSAT-2026", [{"firstName": "Zoë", "mobileNumber": "447700900123"}, {"x": "1"}]
        ),
        "POST",
        "/v3.2/Data/Import",
        {
            "reference": "CSAT-2026",
            "list": [{"firstName": "Zoë", "mobileNumber": "447700900123"}, {"x": "1"}],
        },
        httpx.Response(
            200,
            json=[
                {"status": "Success", "message": "", "firstName": "Zoë"},
                {"Status": "Error", "Message": "invalid mobile"},
            ],
        ),
        check_import,
    ),
    "keyword-create": Case(
        lambda c: c.keywords.create("SURVEY", type="survey", response="Thanks!", finish_date=WHEN),
        "POST",
        "/v3.2/Keyword",
        {
            "keyword": "SURVEY",
            "type": "survey",
            "response": "Thanks!",
            "finishDate": "2026-03-02T09:30:00Z",
        },
        httpx.Response(200),
        check_keyword,
    ),
    "keyword-update": Case(
        lambda c: c.keywords.update("SURVEY", finish_date=WHEN),
        "PATCH",
        "/v3.2/Keyword",
        {"keyword": "SURVEY", "finishDate": "2026-03-02T09:30:00Z"},
        httpx.Response(200, json={"Keyword": "SURVEY", "finishDate": "2026-03-02T09:30:00Z"}),
        check_keyword,
    ),
    "keyword-delete": Case(
        lambda c: c.keywords.delete("SURVEY"),
        "DELETE",
        "/v3.2/Keyword",
        None,
        httpx.Response(200),
        lambda result: None if result is None else pytest.fail("delete returns None"),
        query={"keyword": "SURVEY"},
    ),
    "keyword-list": Case(
        lambda c: c.keywords.list(),
        "GET",
        "/v3.2/Keyword",
        None,
        httpx.Response(200, json=[{"keyword": "SURVEY", "type": "survey"}, "STOPNOW"]),
        check_keyword_list,
    ),
    "lookup": Case(
        lambda c: c.messages.lookup("447700900123"),
        "GET",
        "/v3.2/Message/Lookup/447700900123",
        None,
        httpx.Response(
            200,
            json={
                "messageID": "MS42",
                "status": "Success",
                "carrier": "Vodafone UK",
                "reachable": True,
                "numberType": "Mobile",
            },
        ),
        check_lookup,
    ),
    "message-send": Case(
        lambda c: c.messages.send(
            destination="447700900123",
            source="447700900999",
            message="Rate us 0-10",
            reply=True,
            when=WHEN,
            window=[Window(from_="09:00", to="17:30", days=[1, 2, 3, 4, 5])],
            lookup=True,
            test=False,
            timeout=60,
            type="whatsapp",
            on_behalf="acme-research",
            survey_id=7,
        ),
        "POST",
        "/v3.2/Message",
        {
            "source": "447700900999",
            "destination": "447700900123",
            "message": "Rate us 0-10",
            "reply": True,
            "when": "2026-03-02T09:30:00Z",
            "window": [{"from": "09:00", "to": "17:30", "days": "1,2,3,4,5"}],
            "lookup": True,
            "test": False,
            "timeout": 60,
            "type": 1,
            "onBehalf": "acme-research",
            "surveyId": 7,
        },
        httpx.Response(
            200,
            json={
                "MessageID": "MS1001",
                "Status": "sent",
                "Carrier": "O2",
                "Reachable": True,
                "NumberType": "Mobile",
            },
        ),
        check_send,
    ),
    "message-send-minimal": Case(
        lambda c: c.messages.send(
            destination="447700900123", source="Acme", message="Hi", reply=False
        ),
        "POST",
        "/v3.2/Message",
        {"source": "Acme", "destination": "447700900123", "message": "Hi", "reply": False},
        httpx.Response(200, json={"MessageID": "MS1001", "Status": "Sent"}),
        check_send,
    ),
    "message-send-model": Case(
        lambda c: c.messages.send(
            SendRequest(destination="447700900123", source="Acme", message="Hi", reply=False),
            test=True,
        ),
        "POST",
        "/v3.2/Message",
        {
            "source": "Acme",
            "destination": "447700900123",
            "message": "Hi",
            "reply": False,
            "test": True,
        },
        httpx.Response(200, json={"MessageID": "MS1001", "Status": "Sent"}),
        check_send,
    ),
    "send-email": Case(
        lambda c: c.messages.send_email(
            to="ana@example.org",
            from_="surveys",
            subject="Your feedback",
            content="<p>Tell us</p>",
            when=datetime(2026, 3, 2, 10, 30, tzinfo=timezone(timedelta(hours=1))),
            test=False,
            metadata={"campaign": "spring", "wave": 2},
            callback={
                "url": ["https://cb.example.org/a", "https://cb.example.org/b"],
                "timeout": 5000,
                "total_timeout": 20000,
                "retries": 2,
                "action": ["Email", "Sms"],
                "method": "post",
                "content_type": "application/json",
            },
        ),
        "POST",
        "/v3.2/Message/SendEmail",
        {
            "To": "ana@example.org",
            "From": "surveys",
            "Subject": "Your feedback",
            "Content": "<p>Tell us</p>",
            "When": "2026-03-02T09:30:00Z",
            "Test": False,
            "MetaData": [{"campaign": "spring"}, {"wave": 2}],
            "Callback": [
                {"Url": ["https://cb.example.org/a", "https://cb.example.org/b"]},
                {"Timeout": 5000},
                {"TotalTimeout": 20000},
                {"Retries": 2},
                {"Action": "Email,Sms"},
                {"Method": "POST"},
                {"ContentType": "application/json"},
            ],
        },
        httpx.Response(
            200,
            json={
                "MessageID": "MS77",
                "Status": "Sent",
                "Carrier": "Unknown",
                "Reachable": True,
                "NumberType": "Unknown",
            },
        ),
        check_email,
    ),
    "get-results": Case(
        lambda c: c.surveys.get_results(
            "NPS-WA", format="csv", header=False, since=WHEN, sort_order=2
        ),
        "POST",
        "/v3.2/Survey/GetResults",
        {
            "format": "CSV",
            "header": False,
            "since": "2026-03-02T09:30:00Z",
            "sortOrder": 2,
            "surveyReference": "NPS-WA",
        },
        httpx.Response(200, text='1,"Zoë, ""Z""",9\r\n'),
        lambda text: None if text == '1,"Zoë, ""Z""",9\r\n' else pytest.fail(repr(text)),
    ),
    "get-results-model": Case(
        lambda c: c.surveys.get_results(
            ResultsRequest(survey_reference="NPS-WA", format="CSV", header=False, sort_order="2")
        ),
        "POST",
        "/v3.2/Survey/GetResults",
        {"format": "CSV", "header": False, "sortOrder": 2, "surveyReference": "NPS-WA"},
        httpx.Response(200, text="1,2\r\n"),
        lambda text: None if text == "1,2\r\n" else pytest.fail(repr(text)),
    ),
    "get-results-model-overridden": Case(
        lambda c: c.surveys.get_results(
            ResultsRequest(survey_reference="NPS-WA", format="CSV", header=False),
            format="xml",
            since=WHEN,
        ),
        "POST",
        "/v3.2/Survey/GetResults",
        {
            "format": "XML",
            "header": False,
            "since": "2026-03-02T09:30:00Z",
            "surveyReference": "NPS-WA",
        },
        httpx.Response(200, text="<r/>"),
        lambda text: None if text == "<r/>" else pytest.fail(repr(text)),
    ),
    "get-results-dict": Case(
        lambda c: c.surveys.get_results({"surveyReference": "NPS-WA", "format": "PIPE"}),
        "POST",
        "/v3.2/Survey/GetResults",
        {"format": "PIPE", "surveyReference": "NPS-WA"},
        httpx.Response(200, text="a|b\r\n"),
        lambda text: None if text == "a|b\r\n" else pytest.fail(repr(text)),
    ),
    "tinyurl-register": Case(
        lambda c: c.tinyurl.register(
            "https://example.org/s?id=1", tiny_domain="go.example", reuse=True, slashtag="spring"
        ),
        "POST",
        "/v3.2/TinyUrl/Register",
        {
            "fullUrl": "https://example.org/s?id=1",
            "tinyDomain": "go.example",
            "reuse": True,
            "slashtag": "spring",
        },
        httpx.Response(200, json="https://go.example/spring"),
        lambda link: None if link == "https://go.example/spring" else pytest.fail(link),
    ),
    "tinyurl-register-list": Case(
        lambda c: c.tinyurl.register_list(
            ["https://example.org/a", "https://example.org/b"], reuse=False
        ),
        "POST",
        "/v3.2/TinyUrl/RegisterList",
        {
            "urls": [
                {"fullUrl": "https://example.org/a", "reuse": False},
                {"fullUrl": "https://example.org/b", "reuse": False},
            ]
        },
        httpx.Response(200, json=[{"shortUrl": "https://t.example/1"}, "https://t.example/2"]),
        lambda links: (
            None
            if links == ["https://t.example/1", "https://t.example/2"]
            else pytest.fail(str(links))
        ),
    ),
    "tinyurl-register-list-model": Case(
        lambda c: c.tinyurl.register_list(
            UrlListRequest(
                urls=[
                    UrlRequest(full_url="https://example.org/a", slashtag="a"),
                    UrlRequest(full_url="https://example.org/b", tiny_domain="go.example"),
                ]
            )
        ),
        "POST",
        "/v3.2/TinyUrl/RegisterList",
        {
            "urls": [
                {"fullUrl": "https://example.org/a", "slashtag": "a"},
                {"fullUrl": "https://example.org/b", "tinyDomain": "go.example"},
            ]
        },
        httpx.Response(200, json=["https://t.example/a", "https://go.example/2"]),
        lambda links: (
            None
            if links == ["https://t.example/a", "https://go.example/2"]
            else pytest.fail(str(links))
        ),
    ),
    "tinyurl-register-list-dict": Case(
        lambda c: c.tinyurl.register_list({"urls": [{"fullUrl": "https://example.org/a"}]}),
        "POST",
        "/v3.2/TinyUrl/RegisterList",
        {"urls": [{"fullUrl": "https://example.org/a"}]},
        httpx.Response(200, json=["https://t.example/a"]),
        lambda links: None if links == ["https://t.example/a"] else pytest.fail(str(links)),
    ),
    "webhooks": Case(
        lambda c: c.webhooks.list(),
        "GET",
        "/v3.2/Webhook",
        None,
        httpx.Response(
            200,
            json=[
                {
                    "name": "results",
                    "key": "results-hook",
                    "secret": "s3cret",
                    "payload": "https://hooks.example.org/in",
                    "contentType": "application/json",
                    "isActive": True,
                    "events": ["All"],
                    "method": "POST",
                    "timeout": "30000",
                    "totalTimeout": 60000,
                    "retries": 3,
                    "status": 1,
                }
            ],
        ),
        check_webhooks,
    ),
}


@pytest.mark.parametrize("case", CASES.values(), ids=CASES.keys())
async def test_wire_request_and_response(make_client: Callable[..., Any], case: Case) -> None:
    wire = Wire([case.answer])
    client = make_client(wire)
    result = await resolve(case.call(client))
    case.check(result)
    assert len(wire.requests) == 1
    request = wire.last
    assert request.method == case.method
    assert request.url.path == case.path
    assert dict(request.url.params) == case.query
    assert str(request.url).startswith(BASE + "/v3.2/")
    assert request.headers["Authorization"] == f"Basic {TOKEN}"
    if case.body is None:
        assert request.content == b""
    else:
        assert request.headers["Content-Type"] == "application/json"
        assert body_of(request) == case.body


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        pytest.param('"https://t.example/a"', "https://t.example/a", id="json-string"),
        pytest.param("https://t.example/a\n", "https://t.example/a", id="plain-text"),
        pytest.param('{"TinyUrl": "https://t.example/a"}', "https://t.example/a", id="object"),
        pytest.param('{"link": "https://t.example/a", "x": 1}', "https://t.example/a", id="link"),
    ],
)
async def test_short_link_body_shapes_are_tolerated(
    make_client: Callable[..., Any], body: str, expected: str
) -> None:
    client = make_client(Wire([httpx.Response(200, text=body)]))
    assert await resolve(client.tinyurl.register("https://example.org")) == expected


async def test_register_list_with_wrong_count_is_an_error(make_client: Callable[..., Any]) -> None:
    client = make_client(Wire([httpx.Response(200, json=["https://t.example/1"])]))
    with pytest.raises(sk.UnexpectedResponseError, match="list of 2 short links"):
        await resolve(client.tinyurl.register_list(["https://a.example", "https://b.example"]))


async def test_keyword_and_webhook_shapes_the_reference_does_not_show(
    make_client: Callable[..., Any],
) -> None:
    wire = Wire(
        [
            httpx.Response(200, json=[{"keyword": "JOIN"}, {"type": "survey", "id": 7}]),
            httpx.Response(200, json={"type": "survey", "keyword": None}),
            httpx.Response(200, json=[{"name": "results", "events": None, "isActive": False}]),
        ]
    )
    client = make_client(wire)
    listed = await resolve(client.keywords.list())
    assert [k.keyword for k in listed] == ["JOIN", None]
    assert listed[1].type == "survey" and listed[1].extra_fields == {"id": 7}
    created = await resolve(client.keywords.create("SURVEY"))
    assert created.keyword == "SURVEY" and created.type == "survey"
    (hook,) = await resolve(client.webhooks.list())
    assert hook.events == [] and hook.is_active is False


async def test_register_list_settings_are_not_dropped_beside_a_model(
    make_client: Callable[..., Any],
) -> None:
    wire = Wire([httpx.Response(200, json=["https://t.example/1"])])
    model = UrlListRequest(urls=[UrlRequest(full_url="https://example.org/a")])
    with pytest.raises(TypeError, match="tiny_domain, reuse"):
        await resolve(make_client(wire).tinyurl.register_list(model, reuse=True))
    assert wire.requests == []


async def test_non_json_success_body_is_a_clear_error(make_client: Callable[..., Any]) -> None:
    client = make_client(Wire([httpx.Response(200, text="<html>oops</html>")]))
    with pytest.raises(sk.UnexpectedResponseError, match=r"GET .*/v3.2/Webhook -> 200.*not JSON"):
        await resolve(client.webhooks.list())


async def test_invalid_arguments_fail_before_anything_is_sent(
    make_client: Callable[..., Any],
) -> None:
    wire = Wire([httpx.Response(200, json={})])
    client = make_client(wire)
    with pytest.raises(sk.ValidationError, match="destination: '\\+44 7700'"):
        await resolve(
            client.messages.send(destination="+44 7700", source="A", message="x", reply=False)
        )
    with pytest.raises(sk.ValidationError, match="number"):
        await resolve(client.messages.lookup("0447700900123"))
    # Other scripts' digits without "+" or a region: refused, never put in the URL.
    for number in ["44\uff17\uff1700900123", "\u0664\u0664" + "7700900123"]:
        with pytest.raises(sk.ValidationError, match=r"number: .* cannot be read .*E\.164 digits"):
            await resolve(client.messages.lookup(number))
        with pytest.raises(sk.ValidationError, match="destination"):
            await resolve(
                client.messages.send(destination=number, source="A", message="x", reply=False)
            )
    with pytest.raises(sk.ValidationError, match="reply"):
        await resolve(client.messages.send(destination="447700900123", source="A", message="x"))
    with pytest.raises(sk.ValidationError, match="keyword"):
        await resolve(client.keywords.delete(" "))
    assert wire.requests == []


async def test_loose_survey_id_and_sort_order_fail_before_anything_is_sent(
    make_client: Callable[..., Any],
) -> None:
    wire = Wire([httpx.Response(200, json={})])
    client = make_client(wire)
    with pytest.raises(sk.ValidationError, match="survey_id"):
        await resolve(
            client.messages.send(
                destination="447700900123", source="A", message="x", reply=False, survey_id=2**31
            )
        )
    with pytest.raises(sk.ValidationError, match="sort_order"):
        await resolve(client.surveys.get_results("S", sort_order="1.0"))
    with pytest.raises(sk.ValidationError, match="sort_order"):
        await resolve(client.surveys.get_results("S", sort_order=-(2**31) - 1))
    assert wire.requests == []


async def test_the_debug_log_line_of_a_request_gives_its_elapsed_time(
    make_client: Callable[..., Any], caplog: pytest.LogCaptureFixture
) -> None:
    def slow(request: httpx.Request) -> httpx.Response:
        time.sleep(0.05)
        return httpx.Response(200, json=[])

    client = make_client(slow)
    with caplog.at_level(logging.DEBUG, logger="surveykit"):
        await resolve(client.webhooks.list())
    lines = [r.getMessage() for r in caplog.records if r.name == "surveykit"]
    matches = [re.fullmatch(r"GET /v3\.2/Webhook -> 200 in (\d+\.\d{3})s", line) for line in lines]
    elapsed = [float(m[1]) for m in matches if m]
    assert len(elapsed) == 1, lines
    assert 0.05 <= elapsed[0] < 5.0


async def test_the_debug_log_line_of_a_failed_request_gives_its_elapsed_time(
    make_client: Callable[..., Any], caplog: pytest.LogCaptureFixture
) -> None:
    def refused(request: httpx.Request) -> httpx.Response:
        time.sleep(0.05)
        raise httpx.ReadTimeout("slow", request=request)

    client = make_client(refused, retry=sk.RetryPolicy(max_retries=0))
    with caplog.at_level(logging.DEBUG, logger="surveykit"), pytest.raises(sk.APITimeoutError):
        await resolve(client.webhooks.list())
    lines = [r.getMessage() for r in caplog.records if r.name == "surveykit"]
    pattern = r"GET /v3\.2/Webhook failed after (\d+\.\d{3})s: ReadTimeout"
    elapsed = [float(m[1]) for m in (re.fullmatch(pattern, line) for line in lines) if m]
    assert len(elapsed) == 1, lines
    assert elapsed[0] >= 0.05


def test_message_types_by_name_number_and_enum() -> None:
    assert MessageType.parse("WhatsAppTemplate") is MessageType.WHATSAPP_TEMPLATE
    assert MessageType.parse("facebook") is MessageType.FACEBOOK
    assert MessageType.parse(0) is MessageType.SMS
    assert MessageType.parse("3") is MessageType.WHATSAPP_TEMPLATE
    with pytest.raises(ValueError, match="unknown message type"):
        MessageType.parse("telegram")


def test_no_message_kill_route() -> None:
    assert not hasattr(sk.Client(BASE, TOKEN).messages, "kill")


def test_base_url_may_include_the_version() -> None:
    wire = Wire([httpx.Response(200, json=[])])
    client = sk.Client(BASE + "/v3.2/", TOKEN, transport=httpx.MockTransport(wire))
    client.webhooks.list()
    assert str(wire.last.url) == BASE + "/v3.2/Webhook"


def test_context_managers_close_connections() -> None:
    wire = Wire([httpx.Response(200, json=[])])
    with sk.Client(BASE, TOKEN, transport=httpx.MockTransport(wire)) as client:
        client.webhooks.list()
    assert client._http.is_closed


async def test_async_context_manager_closes() -> None:
    wire = Wire([httpx.Response(200, json=[])])
    async with sk.AsyncClient(BASE, TOKEN, transport=httpx.MockTransport(wire)) as client:
        await client.webhooks.list()
    assert client._http.is_closed


def test_custom_auth_replaces_the_token() -> None:
    class Signer(httpx.Auth):
        def auth_flow(self, request: httpx.Request):  # type: ignore[no-untyped-def]
            request.headers["X-Signature"] = f"sig:{request.method}:{request.url.path}"
            yield request

    wire = Wire([httpx.Response(200, json=[])])
    client = sk.Client(BASE, auth=Signer(), transport=httpx.MockTransport(wire))
    client.webhooks.list()
    assert wire.last.headers["X-Signature"] == "sig:GET:/v3.2/Webhook"
    assert "Authorization" not in wire.last.headers


async def test_cookies_a_server_sets_are_kept_and_sent_back(
    make_client: Callable[..., Any],
) -> None:
    wire = Wire(
        [
            httpx.Response(200, json=[]),
            httpx.Response(200, json=[], headers={"Set-Cookie": "session=abc; Path=/"}),
            httpx.Response(200, json=[]),
        ]
    )
    client = make_client(wire)
    for _ in range(3):
        await resolve(client.webhooks.list())
    assert "cookie" not in wire.requests[1].headers
    assert wire.requests[2].headers["cookie"] == "session=abc"


async def test_request_urls_keep_the_base_path_and_each_path_its_own_url(
    make_client: Callable[..., Any],
) -> None:
    wire = Wire([httpx.Response(200, json={"Reachable": True, "NumberType": "Mobile"})])
    client = make_client(wire)
    client._http.base_url = BASE + "/gateway/"  # a platform behind a path prefix
    client._urls.clear()
    numbers = [f"4479111{i:05d}" for i in range(300)]
    for number in numbers:
        await resolve(client.messages.lookup(number))
    urls = [str(request.url) for request in wire.requests]
    assert urls == [f"{BASE}/gateway/v3.2/Message/Lookup/{number}" for number in numbers]
    assert len(client._urls) == 256  # joined URLs are kept for a bounded number of paths
