"""Codebooks: the model's checks, infer, and JSON / CSV / XLSX files that read back equal."""

from __future__ import annotations

import csv
import json
import os
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import surveykit as sk
from surveykit.report import Codebook, CodebookError, Question

FORMATS = ["json", "csv", "xlsx"]


def satisfaction() -> Codebook:
    return Codebook(
        [
            Question(
                "Q1",
                "How satisfied were you?",
                "rating",
                labels={"5": "Very happy", "4": "Happy", "3": "Neutral", "2": "Unhappy",
                        "1": "Very unhappy"},
                missing={"99": "Don't know", "98": "Refused"},
                min=1,
                max=5,
            ),
            Question("Q2", "Why?", "choice", labels={"B": "Price", "A": "Quality"},
                     missing={"Prefer not to say": "Refused"}),
            Question("Q3", "Recommend?", "nps"),
            Question("Q4", "Which?", "multi", labels={"x": "X", "y": "Y"}, separator="|"),
            Question("Q5", "", "text"),
            Question("Q6", "Age", "number", missing={"-1": "Not given"}),
        ]
    )


def ordered(codebook: Codebook) -> str:
    """The codebook as text: equal texts mean equal codebooks, order included."""
    return json.dumps(codebook.to_dict(), ensure_ascii=False)


# ------------------------------------------------------------------ model


def test_mapping_protocol_and_order() -> None:
    cb = satisfaction()
    assert list(cb) == ["Q1", "Q2", "Q3", "Q4", "Q5", "Q6"]
    assert "Q2" in cb and "Q9" not in cb and len(cb) == 6
    assert cb["Q1"].value_labels() == {"5": "Very happy", "4": "Happy", "3": "Neutral",
                                       "2": "Unhappy", "1": "Very unhappy"}
    assert list(cb["Q1"].value_labels()) == ["5", "4", "3", "2", "1"]  # codebook order kept
    assert cb["Q3"].min == 0 and cb["Q3"].max == 10  # NPS is always 0..10
    assert cb == Codebook.from_dict(cb.to_dict())


def test_unlabelled_scale_points_fill_in_scale_order() -> None:
    q = Question("Q1", kind="rating", labels={"1": "Poor", "5": "Excellent"}, min=1, max=5)
    assert q.value_labels() == {"1": "Poor", "2": "2", "3": "3", "4": "4", "5": "Excellent"}
    assert list(q.value_labels()) == ["1", "2", "3", "4", "5"]


def test_equality_sees_label_order() -> None:
    a = Codebook([Question("Q", kind="choice", labels={"a": "A", "b": "B"})])
    b = Codebook([Question("Q", kind="choice", labels={"b": "B", "a": "A"})])
    assert a != b


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"kind": "likert"}, "Q1.kind: expected one of"),
        ({"labels": {"1": ""}}, "Q1.labels['1']: expected a non-empty text"),
        ({"labels": {"": "x"}}, "Q1.labels: a code must be a non-empty text"),
        ({"labels": {"1": "A"}, "missing": {"1": "B"}}, "code '1' is both"),
        ({"labels": {"1": "Same", "2": "Same"}}, "codes '1' and '2' have the same label"),
        ({"kind": "nps", "min": 1}, "Q1.min/max: an NPS question is always 0..10"),
        ({"min": 5, "max": 1}, "Q1.min: 5 is above max 1"),
        ({"min": float("nan")}, "Q1.min: expected a finite number"),
        ({"separator": ""}, "Q1.separator"),
    ],
    ids=["kind", "empty-label", "empty-code", "both", "same-label", "nps", "bounds", "nan", "sep"],
)
def test_invalid_questions_name_the_field(kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(CodebookError, match=message.replace("[", r"\[").replace("]", r"\]")):
        Question("Q1", **kwargs)  # type: ignore[arg-type]


def test_integer_codes_become_text() -> None:
    q = Question("Q1", kind="rating", labels={1: "Bad", 2: "Good"})  # type: ignore[dict-item]
    assert list(q.labels) == ["1", "2"]


def test_from_dict_errors_name_the_question() -> None:
    data = satisfaction().to_dict()
    data["questions"][2]["kind"] = "stars"
    with pytest.raises(CodebookError, match=r"questions\[2\]: Q3.kind"):
        Codebook.from_dict(data)
    data = satisfaction().to_dict()
    data["questions"][1]["colour"] = "red"
    with pytest.raises(CodebookError, match=r"questions\[1\]: unknown fields \['colour'\]"):
        Codebook.from_dict(data)
    with pytest.raises(CodebookError, match="Q1: the key appears twice"):
        Codebook([Question("Q1"), Question("Q1")])


def test_to_frame_is_one_row_per_value_label() -> None:
    frame = satisfaction().to_frame()
    assert list(frame.columns) == ["key", "text", "kind", "min", "max", "separator", "code",
                                   "label", "missing"]
    q1 = frame[frame["key"] == "Q1"]
    assert q1["code"].tolist() == ["5", "4", "3", "2", "1", "99", "98"]
    assert q1["missing"].tolist() == [False] * 5 + [True, True]
    assert q1["label"].tolist()[-2:] == ["Don't know", "Refused"]
    assert frame[frame["key"] == "Q3"]["code"].isna().all()  # no labels: one row
    assert len(frame) == 7 + 3 + 1 + 2 + 1 + 1


# ------------------------------------------------------------------ files


@pytest.mark.parametrize("suffix", FORMATS)
def test_round_trip(tmp_path: Path, suffix: str) -> None:
    cb = satisfaction()
    path = tmp_path / f"codebook.{suffix}"
    cb.write(path)
    assert ordered(Codebook.read(path)) == ordered(cb)
    assert [p.name for p in tmp_path.iterdir()] == [path.name]  # no temporary file left


_text = st.text(
    st.characters(blacklist_categories=("Cs", "Cc"), blacklist_characters="\ufeff")
    | st.sampled_from("\n\t\r"),
    min_size=1,
    max_size=12,
)
_codes = st.lists(_text, max_size=5, unique=True)


@st.composite
def questions(draw: st.DrawFn, key: str) -> Question:
    kind = draw(st.sampled_from(["rating", "choice", "multi", "number", "text", "date"]))
    codes = draw(_codes)
    split = draw(st.integers(0, len(codes)))
    texts = draw(st.lists(_text, min_size=len(codes), max_size=len(codes), unique=True))
    bounds = draw(st.one_of(st.none(), st.tuples(st.floats(-50, 50), st.floats(0, 50))))
    low, high = (None, None) if bounds is None else (bounds[0], bounds[0] + bounds[1])
    return Question(
        key,
        text=draw(st.one_of(st.just(""), _text)),
        kind=kind,  # type: ignore[arg-type]
        labels=dict(zip(codes[:split], texts[:split], strict=True)),
        missing=dict(zip(codes[split:], texts[split:], strict=True)),
        min=low if kind == "rating" else None,
        max=high if kind == "rating" else None,
        separator=draw(st.sampled_from([";", "|", ", "])),
    )


@st.composite
def codebooks(draw: st.DrawFn) -> Codebook:
    keys = draw(st.lists(_text, min_size=1, max_size=4, unique=True))
    return Codebook([draw(questions(key)) for key in keys])


@pytest.mark.parametrize("suffix", FORMATS)
@settings(max_examples=40, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(cb=codebooks())
def test_any_codebook_reads_back_equal(tmp_path: Path, suffix: str, cb: Codebook) -> None:
    path = tmp_path / f"any.{suffix}"
    cb.write(path)
    assert ordered(Codebook.read(path)) == ordered(cb)


def test_xlsx_keeps_text_that_looks_like_numbers_or_formulas(tmp_path: Path) -> None:
    cb = Codebook([Question("Q1", "=SUM(A1)", "choice", labels={"007": "=1+1", "1.50": "1e3"})])
    cb.write(tmp_path / "c.xlsx")
    back = Codebook.read(tmp_path / "c.xlsx")
    assert back["Q1"].text == "=SUM(A1)"
    assert back["Q1"].labels == {"007": "=1+1", "1.50": "1e3"}


def test_csv_layout_is_what_a_spreadsheet_user_sees(tmp_path: Path) -> None:
    satisfaction().write(tmp_path / "c.csv")
    with (tmp_path / "c.csv").open(encoding="utf-8-sig", newline="") as handle:
        rows = list(csv.reader(handle))
    assert rows[0] == ["key", "text", "kind", "min", "max", "separator", "code", "label",
                       "missing"]
    assert rows[1] == ["Q1", "How satisfied were you?", "rating", "1", "5", ";", "5",
                       "Very happy", ""]
    assert rows[6][6:] == ["99", "Don't know", "yes"]


def test_hand_made_spreadsheet_with_blanks_and_numbers(tmp_path: Path) -> None:
    from openpyxl import Workbook

    book = Workbook()
    sheet = book.active
    sheet.append(["Key", "Code", "Label", "Kind", "Text", "Missing", "Min", "Max"])
    sheet.append(["Q1", 1, "Bad", "rating", "Rate us", None, 1, 3])
    sheet.append(["Q1", 2, "OK", None, None, None, None, None])
    sheet.append(["Q1", 3, "Good", "rating", "Rate us", "", None, None])
    sheet.append([None] * 8)
    sheet.append(["Q1", 9, "No answer", None, None, "yes", None, None])
    sheet.append(["Q2", None, None, "text", "Comments", None, None, None])
    book.save(tmp_path / "hand.xlsx")
    cb = Codebook.read(tmp_path / "hand.xlsx")
    assert cb["Q1"] == Question("Q1", "Rate us", "rating", {"1": "Bad", "2": "OK", "3": "Good"},
                                {"9": "No answer"}, 1, 3)
    assert cb["Q2"] == Question("Q2", "Comments", "text")


def write_csv(path: Path, rows: list[list[str]]) -> None:
    with path.open("w", encoding="utf-8", newline="") as handle:
        csv.writer(handle).writerows(rows)


HEADER = ["key", "text", "kind", "min", "max", "separator", "code", "label", "missing"]


@pytest.mark.parametrize(
    ("rows", "message"),
    [
        ([HEADER, ["Q1", "", "rating", "one", "", "", "", "", ""]],
         r"row 2 \(min\): expected a number, got 'one'"),
        ([HEADER, ["Q1", "A", "choice", "", "", "", "a", "A", ""],
          ["Q1", "B", "choice", "", "", "", "b", "B", ""]],
         r"row 3 \(text\): 'B' differs from row 2 of Q1 \('A'\)"),
        ([HEADER, ["Q1", "", "choice", "", "", "", "a", "A", ""],
          ["Q1", "", "choice", "", "", "", "a", "B", ""]],
         r"row 3 \(code\): 'a' of Q1 is already on row 2"),
        ([HEADER, ["Q1", "", "choice", "", "", "", "a", "", ""]],
         r"row 2 \(label\): empty \(a code needs its label\)"),
        ([HEADER, ["Q1", "", "choice", "", "", "", "", "A", ""]],
         r"row 2 \(code\): empty, but the row has a label"),
        ([HEADER, ["Q1", "", "choice", "", "", "", "a", "A", "maybe"]],
         r"row 2 \(missing\): expected yes or no, got 'maybe'"),
        ([HEADER, ["", "", "choice", "", "", "", "a", "A", ""]], r"row 2 \(key\): empty"),
        ([HEADER, ["Q1", "", "stars", "", "", "", "a", "A", ""]], r"row 2: Q1.kind"),
        ([["key", "code", "label", "colour"]], r"row 1: unknown column 'colour'"),
        ([["key", "text"]], r"row 1: required columns missing: code, label"),
        ([], r"row 1: no header row"),
    ],
    ids=["min", "text-differs", "dup-code", "no-label", "no-code", "flag", "no-key", "kind",
         "unknown-column", "required", "empty"],
)
def test_bad_csv_names_row_and_field(tmp_path: Path, rows: list[list[str]], message: str) -> None:
    path = tmp_path / "bad.csv"
    write_csv(path, rows)
    with pytest.raises(CodebookError, match=message):
        Codebook.read(path)


def test_bad_json_names_line_and_field(tmp_path: Path) -> None:
    path = tmp_path / "bad.json"
    path.write_text('{"questions": [\n  {"key": "Q1",}\n]}', encoding="utf-8")
    with pytest.raises(CodebookError, match=r"bad.json: not JSON \(line 2"):
        Codebook.read(path)
    path.write_text(json.dumps({"questions": [{"key": "Q1", "labels": {"1": 5}}]}))
    with pytest.raises(CodebookError, match=r"questions\[0\]: Q1.labels\['1'\]"):
        Codebook.read(path)


def test_unknown_suffix_and_failed_write_leaves_the_old_file(tmp_path: Path) -> None:
    with pytest.raises(CodebookError, match=r"codebook\.txt: a codebook file is"):
        satisfaction().write(tmp_path / "codebook.txt")
    path = tmp_path / "c.xlsx"
    satisfaction().write(path)
    before = path.read_bytes()
    bad = Codebook([Question("Q1", "bell \x07", "text")])
    with pytest.raises(CodebookError, match=r"Q1\.text"):
        bad.write(path)
    assert path.read_bytes() == before
    assert sorted(os.listdir(tmp_path)) == ["c.xlsx"]


# ------------------------------------------------------------------ infer


def test_infer_kinds_and_scales() -> None:
    n = 60
    rng = np.random.default_rng(1)
    df = pd.DataFrame(
        {
            "respondentId": [f"R{i}" for i in range(n)],
            "sat": pd.array(rng.integers(1, 6, n), dtype="Int64"),
            "sat7": rng.integers(1, 8, n).astype(float),
            "rec": pd.array(rng.integers(0, 11, n), dtype="Int64"),
            "dk": pd.array(np.where(rng.random(n) < 0.2, 99, rng.integers(1, 6, n)),
                           dtype="Int64"),
            "spend": rng.normal(40, 9, n),
            "when": pd.date_range("2026-01-01", periods=n, freq="h", tz="UTC"),
            "why": rng.choice(["Price", "Quality", "Prefer not to say"], n),
            "what": [";".join(rng.choice(["A", "B", "C"], 2, replace=False)) for _ in range(n)],
            "say": [f"comment number {i}" for i in range(n)],
        }
    )
    cb = Codebook.infer(df)
    assert list(cb) == ["sat", "sat7", "rec", "dk", "spend", "when", "why", "what", "say"]
    assert (cb["sat"].kind, cb["sat"].min, cb["sat"].max) == ("rating", 1, 5)
    assert list(cb["sat"].labels) == ["1", "2", "3", "4", "5"]
    assert (cb["sat7"].kind, cb["sat7"].max) == ("rating", 7)
    assert (cb["rec"].kind, cb["rec"].min, cb["rec"].max) == ("nps", 0, 10)
    assert cb["dk"].kind == "rating" and cb["dk"].missing == {"99": "Missing (99)"}
    assert cb["spend"].kind == "number"
    assert cb["when"].kind == "date"
    assert cb["why"].kind == "choice"
    assert cb["why"].labels == {"Price": "Price", "Quality": "Quality"}
    assert cb["why"].missing == {"Prefer not to say": "Prefer not to say"}
    assert cb["what"].kind == "multi" and set(cb["what"].labels) == {"A", "B", "C"}
    assert cb["say"].kind == "text"
    assert "respondentId" not in cb
    assert "sat" not in Codebook.infer(df, respondent_columns=["sat"])


def test_infer_the_sample_surveys(client: sk.Client) -> None:
    cb = Codebook.infer(client.surveys.results("CSAT-SMS-2026"))
    assert [(q.key, q.kind) for q in cb.values()] == [("Q1", "rating"), ("Q2", "choice"),
                                                      ("Q3", "text")]
    cb = Codebook.infer(client.surveys.results("NPS-WA-Q1-2026"))
    assert cb["Q1"].kind == "nps" and cb["Q3"].kind == "choice"
    # what infer drafts, label accepts
    sk.label(client.surveys.results("NPS-WA-Q1-2026"), cb)


def test_infer_generated_multi_keeps_the_form_order(sandbox: sk.Sandbox,
                                                    client: sk.Client) -> None:
    sandbox.add_generated_survey("GEN-INFER", 400, questions=4)
    cb = Codebook.infer(client.surveys.results("GEN-INFER"))
    assert [q.kind for q in cb.values()] == ["nps", "choice", "multi", "text"]
    assert list(cb["Q3"].labels) == ["Price", "Quality", "Service", "Delivery", "Support", "App"]


def test_import_surveykit_stays_light() -> None:
    import subprocess
    import sys

    code = (
        "import sys, surveykit as sk; "
        "heavy = [m for m in ('pyreadstat', 'openpyxl', 'scipy', 'statsmodels', 'matplotlib') "
        "if m in sys.modules]; "
        "print(heavy, callable(sk.to_spss), sk.Codebook.__name__)"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            timeout=60)
    assert result.stdout.strip() == "[] True Codebook", result.stderr
