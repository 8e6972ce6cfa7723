"""Data/Import, Keyword, TinyUrl, Webhook, auth and content types in the sandbox."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pandas as pd
import pytest
from lxml import etree

import surveykit as sk
from surveykit.client import AsyncClient, Client
from surveykit.models import UrlRequest
from surveykit.results import read_results
from surveykit.sandbox import Sandbox


@pytest.fixture
def raw(sandbox: Sandbox) -> Iterator[httpx.Client]:
    """A plain httpx client of the in-process app, with the admin token."""
    from surveykit.client import ASGIPortalTransport

    transport = ASGIPortalTransport(sandbox.app)
    with httpx.Client(transport=transport, base_url=sandbox.base_url,
                      headers={"Authorization": f"Basic {sandbox.admin_token}"}) as c:
        yield c


def results_frame(client: Client, reference: str) -> pd.DataFrame:
    text = client.surveys.get_results(reference, format="JSON")
    return read_results(text.encode(), format="JSON")


# ------------------------------------------------------------------ auth


V32_ROUTES = [
    ("POST", "/v3.2/Data/Import"),
    ("POST", "/v3.2/Keyword"),
    ("PATCH", "/v3.2/Keyword"),
    ("DELETE", "/v3.2/Keyword?keyword=X"),
    ("GET", "/v3.2/Keyword"),
    ("POST", "/v3.2/Message"),
    ("POST", "/v3.2/Message/SendEmail"),
    ("GET", "/v3.2/Message/Lookup/447700900123"),
    ("POST", "/v3.2/Survey/GetResults"),
    ("POST", "/v3.2/TinyUrl/Register"),
    ("POST", "/v3.2/TinyUrl/RegisterList"),
    ("GET", "/v3.2/Webhook"),
]


@pytest.mark.parametrize(("method", "path"), V32_ROUTES, ids=[f"{m} {p}" for m, p in V32_ROUTES])
@pytest.mark.parametrize("authorization", [None, "Basic nope", "Bearer {token}"],
                         ids=["missing", "unknown", "wrong-scheme"])
def test_every_route_is_401_without_a_known_token(
    raw: httpx.Client, sandbox: Sandbox, method: str, path: str, authorization: str | None
) -> None:
    headers = {"Authorization": authorization.format(token=sandbox.admin_token)} \
        if authorization else {}
    request = raw.build_request(method, path, json={}, headers=headers)
    if authorization is None:
        del request.headers["Authorization"]
    response = raw.send(request)
    assert response.status_code == 401
    assert response.json()["status"] == 401
    assert response.headers["WWW-Authenticate"].startswith("Basic")


def test_restricted_token_works_except_email(sandbox: Sandbox) -> None:
    from surveykit.client import ASGIPortalTransport

    with Client(sandbox.base_url, sandbox.restricted_token,
                transport=ASGIPortalTransport(sandbox.app)) as c:
        assert c.keywords.list()
        assert c.messages.send(destination="447700900123", source="447700900100",
                               message="Hi", reply=False).created
        with pytest.raises(sk.PermissionDeniedError):
            c.messages.send_email(to="a@example.org", from_="surveys", subject="s",
                                  content="c")


def test_tokens_differ_by_seed_and_are_not_each_other() -> None:
    a, b = Sandbox(seed=1), Sandbox(seed=2)
    assert a.admin_token != b.admin_token
    assert a.admin_token != a.restricted_token
    assert Sandbox(seed=1).admin_token == a.admin_token


# ------------------------------------------------------------------ import


def test_import_validates_each_record_against_the_definition(
    client: Client, sandbox: Sandbox
) -> None:
    results = client.data.import_records("CSAT-SMS-2026", [
        {"firstName": "Mei", "lastName": "Okafor", "mobileNumber": "447700900150",
         "store": "Leeds Briggate"},
        {"firstName": "Bad", "mobileNumber": "07700 900151"},
        {"mobileNumber": "447700900152"},
        {"firstName": "Unknown", "mobileNumber": "447700900153", "shoeSize": "42"},
        {"firstName": "Choice", "mobileNumber": "447700900154", "store": "Berlin"},
        {"firstName": "Date", "mobileNumber": "447700900155", "dateOfBirth": "17/04/1988"},
    ])
    assert [r.status for r in results] == ["Success", "Error", "Error", "Success", "Error", "Error"]
    assert results[0].message == "Added" and results[0].mobile_number == "447700900150"
    assert "mobileNumber" in (results[1].message or "")
    assert "firstName: required" in (results[2].message or "")
    # An unknown column keeps the record and is named in its message.
    assert (results[3].message or "").startswith("Added; not imported: shoeSize (")
    assert "Berlin" in (results[4].message or "")
    assert "dateOfBirth" in (results[5].message or "")
    assert results[0].when == "2026-03-02T09:00:00+00:00"


def test_import_updates_an_existing_respondent(client: Client) -> None:
    (result,) = client.data.import_records("csat-sms-2026", [
        {"firstName": "Zoe", "mobileNumber": "447700900123"}])
    assert result.ok and result.message == "Updated"
    table = results_frame(client, "CSAT-SMS-2026")
    assert list(table.loc[table["mobileNumber"] == "447700900123", "firstName"]) == ["Zoe"]


def test_imported_respondents_appear_in_results(client: Client) -> None:
    before = results_frame(client, "EVT-DDLIS-2026")
    client.data.import_records("EVT-DDLIS-2026", [
        {"firstName": "Inês", "lastName": "Carvalho", "emailAddress": "ines@example.org",
         "ticket": "Student"}])
    after = results_frame(client, "EVT-DDLIS-2026")
    assert len(after) == len(before) + 1
    row = after.iloc[-1]
    assert (row["firstName"], row["emailAddress"], row["channel"]) == (
        "Inês", "ines@example.org", "Email")


def test_import_unknown_reference_is_404_problem_details(client: Client) -> None:
    with pytest.raises(sk.NotFoundError) as info:
        client.data.import_records("NO-SUCH-SURVEY", [{"firstName": "A"}])
    assert info.value.problem is not None and info.value.problem.status == 404
    assert "NO-SUCH-SURVEY" in (info.value.problem.detail or "")


def test_import_records_that_are_not_objects_refuse_the_body(raw: httpx.Client) -> None:
    # The reference's list is an array of objects: anything else is a type it cannot read
    # (a 400 for the body, not per-record errors; tests/sandbox/test_exact.py has more).
    response = raw.post("/v3.2/Data/Import", json={"reference": "CSAT-SMS-2026",
                                                   "list": ["x", 3]})
    assert response.status_code == 400
    assert list(response.json()["errors"]) == ["list.0"]


# ------------------------------------------------------------------ keywords


def test_keyword_lifecycle(client: Client) -> None:
    created = client.keywords.create("Survey2", type="Survey", response="Thanks!")
    assert created.keyword == "SURVEY2"
    with pytest.raises(sk.APIStatusError) as info:
        client.keywords.create("survey2")
    assert info.value.status_code == 409
    updated = client.keywords.update("SURVEY2", response="Merci !")
    assert (updated.response, updated.type) == ("Merci !", "Survey")
    assert "SURVEY2" in [k.keyword for k in client.keywords.list()]
    client.keywords.delete("survey2")
    assert "SURVEY2" not in [k.keyword for k in client.keywords.list()]
    with pytest.raises(sk.NotFoundError):
        client.keywords.delete("SURVEY2")
    with pytest.raises(sk.NotFoundError):
        client.keywords.update("SURVEY2", response="x")


@pytest.mark.parametrize("word", ["STOP", "help", "two words", "x" * 21])
def test_reserved_or_malformed_keywords_are_refused(client: Client, word: str) -> None:
    with pytest.raises(sk.BadRequestError):
        client.keywords.create(word)


def test_keyword_delete_needs_the_query_parameter(raw: httpx.Client) -> None:
    assert raw.delete("/v3.2/Keyword").status_code == 400


# ------------------------------------------------------------------ webhooks


def test_webhooks_list_the_sample_account(client: Client) -> None:
    hooks = client.webhooks.list()
    assert [h.name for h in hooks] == ["Delivery receipts", "Inbound replies to CRM",
                                       "Legacy dashboard (paused)"]
    assert hooks[0].url == "https://hooks.example.com/brightwater/receipts"
    assert hooks[0].events == ["All"] and hooks[2].is_active is False


# ------------------------------------------------------------------ tinyurl


def test_register_gives_a_link_on_the_sandbox_host(client: Client, sandbox: Sandbox) -> None:
    link = client.tinyurl.register("https://example.org/survey?id=42")
    assert link.startswith(sandbox.base_url + "/")
    assert client.tinyurl.register("https://example.org/survey?id=42") != link
    assert client.tinyurl.register("https://example.org/survey?id=42", reuse=True) == link


def test_links_are_deterministic_per_seed() -> None:
    def links(seed: int) -> list[str]:
        with Client.sandbox(Sandbox(seed=seed)) as c:
            return [c.tinyurl.register(f"https://example.org/{i}") for i in range(3)]

    assert links(3) == links(3) != links(4)


def test_slashtag_and_tiny_domain_are_honoured(client: Client) -> None:
    link = client.tinyurl.register("https://example.org/spring", slashtag="spring-2026",
                                   tiny_domain="go.example.com")
    assert link == "https://go.example.com/spring-2026"
    again = client.tinyurl.register("https://example.org/spring", slashtag="spring-2026",
                                    tiny_domain="go.example.com")
    assert again == link
    with pytest.raises(sk.APIStatusError) as info:
        client.tinyurl.register("https://example.org/other", slashtag="spring-2026",
                                tiny_domain="go.example.com")
    assert info.value.status_code == 409


def test_register_list_keeps_the_order(client: Client) -> None:
    urls = [f"https://example.org/page/{i}" for i in range(5)]
    links = client.tinyurl.register_list([*urls[:4], UrlRequest(full_url=urls[4],
                                                                 slashtag="last-one")])
    assert len(set(links)) == 5 and links[4].endswith("/last-one")


def test_following_a_link_redirects_and_counts(raw: httpx.Client, client: Client,
                                               sandbox: Sandbox) -> None:
    link = client.tinyurl.register("https://example.org/survey?id=7")
    path = httpx.URL(link).path
    assert raw.head(path).status_code == 302  # a preview: not a click
    response = raw.get(path, headers={"Authorization": ""})
    assert response.status_code == 302
    assert response.headers["location"] == "https://example.org/survey?id=7"
    assert sandbox.follow_link(link) == "https://example.org/survey?id=7"
    assert [lk.clicks for lk in sandbox.links()] == [2]
    assert [e.message for e in sandbox.events("Click")] == ["https://example.org/survey?id=7"] * 2
    assert raw.get("/NoSuchLink").status_code == 404


def test_register_bad_url_is_400(raw: httpx.Client) -> None:
    response = raw.post("/v3.2/TinyUrl/Register", json={"fullUrl": "ftp://example.org"})
    assert response.status_code == 400 and "fullUrl" in response.json()["errors"]


# ------------------------------------------------------------------ content types


@pytest.mark.parametrize("content_type", ["application/json", "text/json",
                                          "application/vnd.sandbox+json", "text/plain"])
def test_json_bodies_in_every_listed_content_type(raw: httpx.Client, content_type: str) -> None:
    body = b'{"keyword": "Ct1", "type": "Survey"}'
    response = raw.post("/v3.2/Keyword", content=body, headers={"Content-Type": content_type})
    assert response.status_code == 200, response.text
    assert response.json()["keyword"] == "CT1"


def test_xml_body_is_refused_where_the_reference_does_not_list_it(raw: httpx.Client) -> None:
    response = raw.post("/v3.2/Keyword", content=b"<KeywordModel><keyword>A</keyword>"
                        b"</KeywordModel>", headers={"Content-Type": "application/xml"})
    assert response.status_code == 415


@pytest.mark.parametrize("content_type", ["application/xml", "text/xml",
                                          "application/vnd.sandbox+xml"])
def test_tinyurl_takes_xml(raw: httpx.Client, content_type: str) -> None:
    one = raw.post("/v3.2/TinyUrl/Register", headers={"Content-Type": content_type},
                   content=b"<UrlModel><fullUrl>https://example.org/x</fullUrl>"
                           b"<reuse>true</reuse><slashtag>xml-one</slashtag></UrlModel>")
    assert one.status_code == 200, one.text
    assert one.json()["shortUrl"].endswith("/xml-one")
    many = raw.post("/v3.2/TinyUrl/RegisterList", headers={"Content-Type": content_type},
                    content=b"<UrlListModel><urls><UrlModel><fullUrl>https://example.org/a"
                            b"</fullUrl></UrlModel></urls></UrlListModel>")
    assert many.status_code == 200, many.text
    assert len(many.json()) == 1


def test_xml_entities_are_not_expanded(raw: httpx.Client) -> None:
    evil = (b'<?xml version="1.0"?><!DOCTYPE x [<!ENTITY e SYSTEM "file:///etc/passwd">]>'
            b"<UrlModel><fullUrl>https://example.org/&e;</fullUrl></UrlModel>")
    response = raw.post("/v3.2/TinyUrl/Register", content=evil,
                        headers={"Content-Type": "application/xml"})
    assert "root:" not in response.text


def test_responses_in_xml_when_asked(raw: httpx.Client) -> None:
    response = raw.get("/v3.2/Webhook", headers={"Accept": "application/xml"})
    assert response.headers["content-type"].startswith("application/xml")
    root = etree.fromstring(response.content)
    assert root.tag == "ArrayOfWebHookModel"
    assert root.find("WebHookModel/name").text == "Delivery receipts"  # type: ignore[union-attr]
    sent = raw.post("/v3.2/Message", headers={"Accept": "text/xml"},
                    json={"source": "447700900100", "destination": "447700900123",
                          "message": "Hi", "reply": False})
    root = etree.fromstring(sent.content)
    assert root.tag == "SendResponse" and root.findtext("Status") == "Sent"


@pytest.mark.parametrize(("accept", "expected"), [
    ("text/plain", "text/plain"), ("text/json", "text/json"), ("*/*", "application/json"),
    ("image/png", "application/json"), ("application/xml;q=0.5, text/json", "text/json"),
])
def test_accept_negotiation(raw: httpx.Client, accept: str, expected: str) -> None:
    response = raw.get("/v3.2/Keyword", headers={"Accept": accept})
    assert response.headers["content-type"].split(";")[0] == expected


@pytest.mark.parametrize(("content", "content_type", "status"), [
    (b"", "application/json", 400),
    (b"{not json", "application/json", 400),
    (b'{"a": 1}', "application/x-www-form-urlencoded", 415),
    (b"[1, 2]", "application/json", 400),
])
def test_unreadable_bodies(raw: httpx.Client, content: bytes, content_type: str,
                           status: int) -> None:
    response = raw.post("/v3.2/Message", content=content, headers={"Content-Type": content_type})
    assert response.status_code == status
    assert response.json()["status"] == status


def test_property_names_in_any_case_and_unknown_ignored(raw: httpx.Client) -> None:
    response = raw.post("/v3.2/Message", json={
        "Source": "447700900100", "DESTINATION": "447700900123", "Message": "Hi",
        "Reply": False, "Colour": "blue"})
    assert response.status_code == 200, response.text


def test_unknown_route_is_404_problem(raw: httpx.Client) -> None:
    response = raw.get("/v3.2/Nope")
    assert response.status_code == 404 and response.json()["status"] == 404


def test_openapi_document_is_served_without_a_token(sandbox: Sandbox) -> None:
    from openapi_spec_validator import validate

    with Client.sandbox(sandbox) as c:
        response = c._http.get("/openapi.json", headers={"Authorization": ""})
    document: dict[str, Any] = response.json()
    validate(document)  # type: ignore[arg-type]
    assert document["openapi"].startswith("3.1")
    operations = {(m.upper(), p) for p, item in document["paths"].items() for m in item}
    assert operations == {(m, p.split("?")[0].replace("447700900123", "{number}"))
                          for m, p in V32_ROUTES}


async def test_async_client_covers_the_other_routes(aclient: AsyncClient) -> None:
    assert await aclient.keywords.list()
    results = await aclient.data.import_records("NPS-WA-Q1-2026", [
        {"firstName": "Ada", "lastName": "Quinn", "mobileNumber": "447700900160"}])
    assert results[0].ok
    assert (await aclient.tinyurl.register("https://example.org/a")).startswith("http://")
    assert len(await aclient.webhooks.list()) == 3
