"""``sk.doctor`` and ``surveykit doctor``: one line per check, faults on the right line.

Against the in-process sandbox, the served sandbox (``surveykit sandbox serve``), a sandbox
behind TLS with a self-signed certificate, a closed port, and a transport that alters one
format's answer. The bundle is read back: every answer is there, the token nowhere.
"""

from __future__ import annotations

import json
import socket
import subprocess
import zipfile
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from typer.testing import CliRunner

import surveykit as sk
from surveykit._doctor._checks import FORMATS
from surveykit.cli import app
from surveykit.client import ASGIPortalTransport
from surveykit.results import LAYOUTS
from surveykit.sandbox import Sandbox
from tests.helpers.http_servers import serve_asgi
from tests.helpers.sandbox_server import ServedSandbox, serve_sandbox

SURVEY = "CSAT-SMS-2026"
BASE_CHECKS = ["address", "tls", "token", *(f"results {f}" for f in FORMATS), "results agree"]


@pytest.fixture(scope="module")
def served() -> Iterator[ServedSandbox]:
    with serve_sandbox() as server:
        yield server


@pytest.fixture
def control(served: ServedSandbox) -> Iterator[httpx.Client]:
    headers = {"Authorization": f"Basic {served.token}"}
    with httpx.Client(base_url=served.base_url, headers=headers, trust_env=False) as http:
        assert http.post("/_sandbox/reset").status_code == 200
        yield http
        http.delete("/_sandbox/faults")


def bundle_texts(path: Path) -> dict[str, bytes]:
    if path.suffix == ".zip":
        with zipfile.ZipFile(path) as archive:
            return {Path(n).name: archive.read(n) for n in archive.namelist()}
    return {p.name: p.read_bytes() for p in sorted(path.iterdir())}


# ------------------------------------------------------------------ everything well


def test_in_process_sandbox_passes_every_check() -> None:
    with sk.Client.sandbox() as client:
        report = sk.doctor(client, survey=SURVEY, lookup="447700900123",
                           test_send="447700900124")
        assert client.embedded is not None
        assert client.embedded.journal("message") == []  # a test send sends nothing
    assert [c.name for c in report] == [*BASE_CHECKS, "lookup", "test send"]
    assert report.ok, str(report)
    expected_rows = len(sk.Client.sandbox().surveys.results(SURVEY))
    assert report["results JSON"].detail.startswith(f"{expected_rows} rows")
    assert report["lookup"].detail == "447700900123: Success, Mobile, Vodafone UK, reachable"
    assert list(report.to_frame()["name"]) == [c.name for c in report]


def test_served_sandbox_passes_and_the_bundle_holds_no_token(
    served: ServedSandbox, control: httpx.Client, tmp_path: Path
) -> None:
    target = tmp_path / "doctor.zip"
    with sk.Client(served.base_url, served.token) as client:
        report = sk.doctor(client, survey=SURVEY, bundle=target)
    assert report.ok, str(report)
    assert report["tls"].detail == "plain http on loopback: nothing crosses the network"
    assert report.bundle == target
    files = bundle_texts(target)
    assert files["checks.txt"].decode().splitlines() == report.lines()
    assert [c["name"] for c in json.loads(files["checks.json"])] == BASE_CHECKS
    answers = {name: text.decode() for name, text in files.items() if name[0].isdigit()}
    assert len(answers) == 1 + len(FORMATS)  # the token check, then one per format
    for fmt in FORMATS:
        (text,) = [t for n, t in answers.items() if n.endswith(f"results-{fmt}.txt")]
        assert "POST " + served.base_url + "/v3.2/Survey/GetResults" in text
        assert "HTTP/1.1 200 OK" in text and "content-type:" in text.lower()
        assert "respondentId" in text  # the answer's first kilobytes
    for name, content in files.items():
        assert served.token.encode() not in content, name
        assert b"authorization" not in content.lower(), name


def test_a_folder_bundle_keeps_the_first_kilobytes(control: httpx.Client,
                                                   served: ServedSandbox,
                                                   tmp_path: Path) -> None:
    control.post("/_sandbox/surveys/generate", json={"reference": "BIG", "rows": 300})
    with sk.Client(served.base_url, served.token) as client:
        report = sk.doctor(client, survey="BIG", bundle=tmp_path / "b")
    assert report.ok, str(report)
    (csv,) = [p for p in (tmp_path / "b").iterdir() if p.name.endswith("results-CSV.txt")]
    text = csv.read_text()
    assert "more bytes]" in text and len(text.encode()) < 4096 + 2048
    assert all(served.token not in p.read_text() for p in (tmp_path / "b").iterdir())


# ------------------------------------------------------------------ faults, each on its line


def test_a_500_on_getresults_fails_that_format_only(served: ServedSandbox,
                                                    control: httpx.Client) -> None:
    fault = {"route": "/v3.2/Survey/GetResults", "status": 500, "times": 1}
    assert control.post("/_sandbox/faults", json=fault).status_code == 200
    with sk.Client(served.base_url, served.token, max_retries=0) as client:
        report = sk.doctor(client, survey=SURVEY)
    failed = [c.name for c in report if not c.ok]
    assert failed == ["results CSV"]  # the first format asked for took the fault
    assert "HTTP 500" in report["results CSV"].detail
    assert report["results agree"].detail.startswith("PIPE, TAB, XML, JSON give the same")
    assert not report.ok


def test_a_wrong_token_fails_the_token_line_naming_the_setting(served: ServedSandbox) -> None:
    with sk.Client(served.base_url, "not-the-token") as client:
        report = sk.doctor(client, survey=SURVEY, lookup="447700900123")
    assert report["address"].ok and report["tls"].ok
    assert not report["token"].ok
    detail = report["token"].detail
    assert "401" in detail and "--token or SURVEYKIT_TOKEN" in detail
    assert all(not c.ok and c.detail.startswith("not checked") for c in report.checks[3:])
    assert "not-the-token" not in str(report)


def test_an_unreachable_port_fails_the_address_line(tmp_path: Path) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]  # closed when the block ends: nothing listens there
    with sk.Client(f"http://127.0.0.1:{port}", "tok-123456", max_retries=0) as client:
        report = sk.doctor(client, bundle=tmp_path / "b.zip")
    assert not report["address"].ok and f"127.0.0.1:{port}" in report["address"].detail
    assert "no answer" in report["address"].detail
    assert report["token"].detail == "not checked: the platform did not answer"
    files = bundle_texts(tmp_path / "b.zip")
    assert "no answer:" in files["01-token.txt"].decode()
    assert all(b"tok-123456" not in content for content in files.values())


def test_a_self_signed_certificate_fails_the_tls_line(tmp_path: Path) -> None:
    key, cert = tmp_path / "key.pem", tmp_path / "cert.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-subj",
                    "/CN=127.0.0.1", "-keyout", str(key), "-out", str(cert), "-days", "1"],
                   check=True, capture_output=True, timeout=60)
    with Sandbox() as sandbox, serve_asgi(sandbox.app, ssl_keyfile=str(key),
                                          ssl_certfile=str(cert)) as url:
        https = url.replace("http://", "https://")
        with sk.Client(https, sandbox.admin_token, max_retries=0) as client:
            report = sk.doctor(client)
    assert report["address"].ok
    assert not report["tls"].ok
    assert "certificate was refused" in report["tls"].detail
    assert "self-signed" in report["tls"].detail or "self signed" in report["tls"].detail
    assert report["token"].detail == "not checked: the platform did not answer"


def test_a_failed_lookup_and_a_refused_test_send_are_their_own_lines(
    served: ServedSandbox, control: httpx.Client
) -> None:
    with sk.Client(served.base_url, served.token) as client:
        report = sk.doctor(client, survey=SURVEY, lookup="447700900902",
                           test_send="447700900903")
    assert [c.name for c in report if not c.ok] == ["lookup", "test send"]
    assert report["lookup"].detail == "447700900902: the lookup failed (status Error)"
    assert report["test send"].detail == "447700900903: refused (Status Blocked)"


# ------------------------------------------------------------------ formats that disagree


class Tamper(httpx.BaseTransport):
    """The in-process sandbox, with one format's answer altered by ``change``."""

    def __init__(self, sandbox: Sandbox, fmt: str, change: object) -> None:
        self.inner = ASGIPortalTransport(sandbox.app)
        self.fmt, self.change = fmt, change

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        response = self.inner.handle_request(request)
        if not request.url.path.endswith("GetResults"):
            return response
        if json.loads(request.content)["format"] != self.fmt:
            return response
        content = response.read()
        altered = self.change(json.loads(content))  # type: ignore[operator]
        return httpx.Response(response.status_code, headers=response.headers,
                              json=altered)


def tampered(change: object) -> sk.Client:
    sandbox = Sandbox()
    return sk.Client(sandbox.base_url, sandbox.admin_token,
                     transport=Tamper(sandbox, "JSON", change))


def test_a_value_that_differs_in_one_format_is_named() -> None:
    def change(rows: list[dict[str, object]]) -> list[dict[str, object]]:
        rows[2]["Q2"] = "Something else"
        return rows

    with tampered(change) as client:
        expected = client.surveys.results(SURVEY, format="CSV").iloc[2]
        report = sk.doctor(client, survey=SURVEY)
    check = report["results agree"]
    assert not check.ok and [c.name for c in report if not c.ok] == ["results agree"]
    assert check.detail == (
        f"JSON differs from CSV in column 'Q2', row 3 (respondentId "
        f"{expected['respondentId']}): JSON 'Something else', CSV {expected['Q2']!r}")


def test_a_missing_respondent_in_one_format_is_named() -> None:
    with tampered(lambda rows: rows[:-1]) as client:
        report = sk.doctor(client, survey=SURVEY)
    n = len(sk.Client.sandbox().surveys.results(SURVEY))
    assert report["results agree"].detail == f"JSON has {n - 1} rows, CSV {n}"


# ------------------------------------------------------------------ the command line


def test_cli_exit_codes_and_one_line_per_check(served: ServedSandbox, control: httpx.Client,
                                               tmp_path: Path) -> None:
    runner = CliRunner()
    ok = runner.invoke(app, ["doctor", "--survey", SURVEY, "--base-url", served.base_url,
                             "--token", served.token, "--bundle", str(tmp_path / "b")])
    assert ok.exit_code == 0, ok.output
    lines = ok.stdout.splitlines()
    assert [line.split()[0] for line in lines[:-1]] == ["ok"] * len(BASE_CHECKS)
    assert lines[-1] == f"bundle written to {tmp_path / 'b'}"
    wrong = runner.invoke(app, ["doctor", "--base-url", served.base_url, "--token", "nope"])
    assert wrong.exit_code == 1
    (token_line,) = [line for line in wrong.stdout.splitlines() if " token " in line]
    assert token_line.startswith("FAIL") and "SURVEYKIT_TOKEN" in token_line
    assert "Traceback" not in wrong.output


@pytest.mark.parametrize("args", [
    ["--lookup", "+447700900123"], ["--test-send", "07700"], ["--bundle", "FILE"]])
def test_cli_usage_errors_exit_2(args: list[str], tmp_path: Path) -> None:
    existing = tmp_path / "file.txt"
    existing.write_text("x")
    args = [str(existing) if a == "FILE" else a for a in args]
    result = CliRunner().invoke(app, ["doctor", *args])
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert args[0] in result.output


def test_doctor_refuses_bad_arguments() -> None:
    with sk.Client.sandbox() as client:
        with pytest.raises(ValueError, match=r"lookup: expected E\.164"):
            sk.doctor(client, lookup="0123")
        with pytest.raises(TypeError, match=r"surveykit\.Client"):
            sk.doctor(object())  # type: ignore[arg-type]


def test_a_payload_that_is_not_the_format_is_reported_unreadable() -> None:
    sandbox = Sandbox()

    class Garble(Tamper):
        def handle_request(self, request: httpx.Request) -> httpx.Response:
            response = self.inner.handle_request(request)
            if request.url.path.endswith("GetResults") and b'"XML"' in request.content:
                response.read()
                return httpx.Response(200, content=b"<Results><Result>", headers={
                    "content-type": "application/xml"})
            return response

    with sk.Client(sandbox.base_url, sandbox.admin_token,
                   transport=Garble(sandbox, "XML", None)) as client:
        report = sk.doctor(client, survey=SURVEY)
    assert [c.name for c in report if not c.ok] == ["results XML"]
    assert report["results XML"].detail.startswith("unreadable as XML: ")


@pytest.mark.parametrize("layout", sorted(set(LAYOUTS) - {"documented"}))
def test_every_results_layout_passes_and_reads_the_same(layout: str) -> None:
    with sk.Sandbox(results_layout=layout) as sandbox, sk.Client.sandbox(sandbox) as client:
        report = sk.doctor(client, survey=SURVEY)
    assert report.ok, f"{layout}: {report}"
    assert report["results agree"].ok
