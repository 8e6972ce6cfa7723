"""Numbers as people write them in a batch: normalised as the import does, ``number_check``,
``strict``, ``region`` (and the client's default), and ``surveykit send --region``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd
import phonenumbers
import pytest
from typer.testing import CliRunner

import surveykit as sk
from surveykit.cli import app
from surveykit.sandbox import Sandbox

SOURCE = "447700900999"
WRITTEN = ["+44 7911 123456", "07911-123457", "(0)7911 123 458", 447911123459.0, "07700 900123"]


def expected(value: Any, region: str) -> tuple[str, str]:
    """E.164 digits and check worked out with phonenumbers directly, value by value."""
    text = str(int(value)) if isinstance(value, float) else str(value)
    if isinstance(value, float):
        text = "+" + text
    parsed = phonenumbers.parse(text, region)
    digits = phonenumbers.format_number(parsed, phonenumbers.PhoneNumberFormat.E164)[1:]
    return digits, "valid" if phonenumbers.is_valid_number(parsed) else "unverified"


def frame(values: list[Any]) -> pd.DataFrame:
    return pd.DataFrame(
        {"mobileNumber": values, "name": [f"P{i}" for i in range(len(values))]},
        index=pd.Index([f"r{i}" for i in range(len(values))], name="row"),
    )


def sandbox_client() -> sk.Client:
    return sk.Client.sandbox(Sandbox(seed=2, sample_data=False))


def test_numbers_as_written_are_sent_as_e164_with_their_check() -> None:
    client = sandbox_client()
    df = frame(WRITTEN)
    result = sk.send_batch(
        client, df, message="Hi {name}", source=SOURCE, region="GB", progress=False
    )
    want = [expected(v, "GB") for v in WRITTEN]
    assert result.frame["destination"].tolist() == [d for d, _ in want]
    assert result.frame["number_check"].tolist() == [c for _, c in want]
    assert "unverified" in result.frame["number_check"].tolist()
    assert result.frame["outcome"].astype(str).tolist() == ["sent"] * len(WRITTEN)
    sent = sorted(m.destination for m in client.embedded.messages())  # type: ignore[union-attr]
    assert sent == sorted(d for d, _ in want)
    preview = sk.preview_batch(client, df, message="Hi", source=SOURCE, region="gb")
    assert preview.frame["number_check"].tolist() == [c for _, c in want]


def test_strict_refuses_unverified_numbers_and_sends_the_rest() -> None:
    client = sandbox_client()
    df = frame(WRITTEN)
    result = sk.send_batch(
        client, df, message="Hi", source=SOURCE, region="GB", strict=True, progress=False
    )
    unverified = [expected(v, "GB")[1] == "unverified" for v in WRITTEN]
    outcomes = result.frame["outcome"].astype(str).tolist()
    assert outcomes == ["rejected" if u else "sent" for u in unverified]
    refused = result.frame.loc[[u for u in unverified], "error"].tolist()
    assert refused == [
        "mobileNumber: '07700 900123' is unverified (possible, but not a valid number for "
        "phonenumbers); strict=True refuses it"
    ]
    sent = {m.destination for m in client.embedded.messages()}  # type: ignore[union-attr]
    assert expected("07700 900123", "GB")[0] not in sent
    assert len(sent) == len(WRITTEN) - sum(unverified)


def test_national_numbers_need_a_region_and_the_clients_default_gives_it() -> None:
    client = sandbox_client()
    df = frame(["07911 123456", "+447911123457", "0044 7700"])
    result = sk.send_batch(client, df, message="Hi", source=SOURCE, progress=False)
    assert result.frame["outcome"].astype(str).tolist() == ["invalid", "sent", "invalid"]
    assert result.frame.at["r0", "error"] == (
        "mobileNumber: '07911 123456': no region given for a national number"
    )
    client = sk.Client.sandbox(client.embedded, default_region="GB")
    again = sk.preview_batch(client, df, message="Hi", source=SOURCE)
    assert again.frame["outcome"].tolist() == ["ready", "ready", "invalid"]
    assert again.frame.at["r0", "destination"] == expected("07911 123456", "GB")[0]
    # An explicit region wins over the client's.
    us = sk.preview_batch(
        client, frame(["(212) 555-0123"]), message="Hi", source=SOURCE, region="US"
    )
    assert us.frame.at["r0", "destination"] == expected("(212) 555-0123", "US")[0]


@pytest.mark.parametrize("call", [sk.send_batch, sk.preview_batch], ids=["send", "preview"])
def test_an_unknown_region_is_refused_by_name(call: Any) -> None:
    with pytest.raises(sk.ValidationError, match=r"^region: 'XX' is not a region"):
        call(sandbox_client(), frame(["07911 123456"]), message="Hi", source=SOURCE, region="XX")


def test_send_command_region_strict_and_timezone(tmp_path: Path) -> None:
    source = tmp_path / "list.csv"
    source.write_text(
        'mobileNumber,firstName\n"07911 123456",Ana\n"07700 900123",Bo\n0212345,Cy\n',
        encoding="utf-8",
    )
    env = {"SURVEYKIT_BASE_URL": "", "SURVEYKIT_TOKEN": ""}
    args = ["send", str(source), "--message", "Hi {firstName}", "--source", SOURCE]
    result = CliRunner().invoke(app, [*args, "--region", "GB", "--strict", "--test"], env=env)
    assert result.exit_code == 0, result.output
    outcome = pd.read_csv(tmp_path / "list.csv.sent.csv", dtype=str)
    assert outcome["outcome"].tolist() == ["tested", "rejected", "invalid"]
    assert outcome["number_check"].tolist()[:1] == ["valid"]
    assert "strict=True refuses it" in outcome.at[1, "error"]
    shown = CliRunner().invoke(
        app,
        [
            *args,
            "--region",
            "GB",
            "--window",
            "Mon-Fri 09:00-18:00",
            "--timezone",
            "auto",
            "--preview",
        ],
        env=env,
    )
    assert shown.exit_code == 0, shown.output
    assert "local_send_time" in shown.output and "Europe/London" in shown.output
    bad = CliRunner().invoke(app, [*args, "--region", "XX", "--preview"], env=env)
    assert bad.exit_code == 2 and "region: 'XX' is not a region" in bad.output
    assert "Traceback" not in bad.output
