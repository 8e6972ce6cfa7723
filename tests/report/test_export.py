"""SPSS, Stata and Excel files, read back with pyreadstat and openpyxl."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyreadstat
import pytest
from openpyxl import load_workbook

import surveykit as sk
from surveykit.report import Codebook, ExportError, LabelError, Question
from surveykit.report._excel import P_VALUE, PERCENT, PERCENT_POINTS, sheet_names
from tests.helpers.files import mode, umask

SAT = {"1": "Very unhappy", "2": "Unhappy", "3": "Neutral", "4": "Happy", "5": "Very happy"}
LONG_TEXT = "How satisfied were you with the café, the staff and the queue today? " * 4


def codebook() -> Codebook:
    return Codebook(
        [
            Question("Q1", LONG_TEXT, "rating", labels=SAT,
                     missing={"99": "Don't know", "98": "Refused"}, min=1, max=5),
            Question("Q2", "Main reason", "choice", labels={"Price": "Price", "Quality": "Quality"},
                     missing={"Prefer not to say": "Declined"}),
            Question("Q3", "Recommend?", "nps", labels={"0": "Not at all", "10": "Extremely"}),
            Question("Q4", "Age", "number", missing={"-1": "Not given"}),
            Question("Q5", "Comments", "text"),
            Question("Q6", "Which?", "multi", labels={"A": "Apples", "B": "Bananas"}),
        ]
    )


def results() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "respondentId": pd.array(["r1", "r2", "r3", "r4", "r5"], dtype="string"),
            "completed": pd.to_datetime(
                ["2026-03-01T10:00:00+01:00", None, "2026-03-02T23:30:00-05:00",
                 "2026-03-03T00:00:00Z", "2026-03-04T12:00:00Z"], utc=True, format="ISO8601"),
            "Q1": pd.array([5, 99, 1, None, 98], dtype="Int64"),
            "Q2": pd.Categorical(["Price", "Prefer not to say", "Quality", None, "Price"]),
            "Q3": pd.array([10, 0, 7, 9, None], dtype="Int64"),
            "Q4": pd.array([34, -1, 51, None, 20], dtype="Int64"),
            "Q5": pd.array(["Great", None, "Zoë's café 👍", "", "ok"], dtype="string"),
            "Q6": pd.array(["A;B", "B", None, "", "A"], dtype="string"),
            "has spaces & symbols": [1.5, 2.5, None, 4.0, 5.0],
        }
    )


EXPECTED_Q1 = [5.0, 99.0, 1.0, np.nan, 98.0]
EXPECTED_Q2 = [1.0, -1.0, 2.0, np.nan, 1.0]  # choices numbered in codebook order


def same(values: Any, expected: list[float]) -> bool:
    return bool(np.array_equal(np.asarray(values, dtype=float), np.asarray(expected),
                               equal_nan=True))


@pytest.mark.parametrize("labelled", [False, True], ids=["raw", "labelled"])
def test_spss_reads_back(tmp_path: Path, labelled: bool) -> None:
    df = results()
    source = sk.label(df, codebook()) if labelled else df
    path = tmp_path / "out.sav"
    renames = sk.to_spss(source, path, codebook=None if labelled else codebook())
    assert renames == {"has spaces & symbols": "has_spaces___symbols"}
    data, meta = pyreadstat.read_sav(path, user_missing=True)
    assert meta.column_names[:3] == ["respondentId", "completed", "Q1"]
    spss_label = LONG_TEXT.encode()[:256].decode(errors="ignore").rstrip()  # 256 bytes
    assert meta.column_names_to_labels["Q1"] == spss_label
    assert meta.column_names_to_labels["Q2"] == "Main reason"
    assert meta.column_names_to_labels["respondentId"] is None
    assert meta.variable_value_labels["Q1"] == {
        **{float(k): v for k, v in SAT.items()}, 99.0: "Don't know", 98.0: "Refused"}
    assert meta.variable_value_labels["Q2"] == {1.0: "Price", 2.0: "Quality", -1.0: "Declined"}
    assert meta.variable_value_labels["Q3"] == {0.0: "Not at all", **{float(i): str(i)
                                                for i in range(1, 10)}, 10.0: "Extremely"}
    assert meta.variable_value_labels["Q4"] == {-1.0: "Not given"}
    assert meta.missing_ranges["Q1"] == [{"lo": 99.0, "hi": 99.0}, {"lo": 98.0, "hi": 98.0}]
    assert meta.missing_ranges["Q2"] == [{"lo": -1.0, "hi": -1.0}]
    assert meta.missing_ranges["Q4"] == [{"lo": -1.0, "hi": -1.0}]
    assert meta.variable_measure == {
        "respondentId": "nominal", "completed": "scale", "Q1": "ordinal", "Q2": "nominal",
        "Q3": "scale", "Q4": "scale", "Q5": "nominal", "Q6": "nominal",
        "Q6_1": "nominal", "Q6_2": "nominal", "has_spaces___symbols": "scale"}
    assert same(data["Q1"], EXPECTED_Q1)  # user-missing codes kept as values
    assert same(data["Q2"], EXPECTED_Q2)
    assert same(data["Q3"], [10, 0, 7, 9, np.nan])
    assert same(data["Q4"], [34, -1, 51, np.nan, 20])
    assert data["Q5"].tolist() == ["Great", "", "Zoë's café 👍", "", "ok"]
    assert data["Q6"].tolist() == ["A;B", "B", "", "", "A"]
    assert same(data["has_spaces___symbols"], [1.5, 2.5, np.nan, 4.0, 5.0])
    expected_times = df["completed"].dt.tz_convert("UTC").dt.tz_localize(None)
    assert data["completed"].astype("datetime64[us]").equals(
        expected_times.astype("datetime64[us]"))
    # without user_missing, SPSS's missing codes read as missing
    plain, _ = pyreadstat.read_sav(path)
    assert same(plain["Q1"], [5, np.nan, 1, np.nan, np.nan])


@pytest.mark.parametrize("labelled", [False, True], ids=["raw", "labelled"])
def test_spss_whole_numbers_have_integer_formats(tmp_path: Path, labelled: bool) -> None:
    df = results().assign(big=pd.array([123_456_789_012, 1, None, 2, 3], dtype="Int64"))
    source = sk.label(df, codebook()) if labelled else df
    sk.to_spss(source, tmp_path / "f.sav", codebook=None if labelled else codebook())
    _, meta = pyreadstat.read_sav(tmp_path / "f.sav")
    formats = meta.original_variable_types
    assert {k: formats[k] for k in ("Q1", "Q2", "Q3", "Q4")} == dict.fromkeys(
        ["Q1", "Q2", "Q3", "Q4"], "F8.0")  # codes read 5, not 5.00
    assert formats["big"] == "F13.0"  # wide enough for its 12 digits
    assert formats["has_spaces___symbols"] == "F8.2"  # 1.5 keeps its decimals
    assert formats["Q6_1"] == formats["Q6_2"] == "F1.0"
    assert formats["completed"].startswith("DATETIME")


@pytest.mark.parametrize("labelled", [False, True], ids=["raw", "labelled"])
def test_spss_multi_questions_are_dichotomies_and_an_mrsets_syntax_file(
    tmp_path: Path, labelled: bool
) -> None:
    book = codebook()
    book["Q6"].text = "Which fruit's best?"
    df = results()
    source = sk.label(df, book) if labelled else df
    path = tmp_path / "fruit.sav"
    sk.to_spss(source, path, codebook=None if labelled else book)
    data, meta = pyreadstat.read_sav(path)
    names = meta.column_names
    assert names[names.index("Q6"):names.index("Q6") + 3] == ["Q6", "Q6_1", "Q6_2"]
    # answers "A;B", "B", None, "" (answered, no option), "A"
    assert same(data["Q6_1"], [1, 0, np.nan, 0, 1])
    assert same(data["Q6_2"], [1, 1, np.nan, 0, 0])
    assert meta.column_names_to_labels["Q6_1"] == "Which fruit's best?: Apples"
    assert meta.column_names_to_labels["Q6_2"] == "Which fruit's best?: Bananas"
    assert meta.variable_value_labels["Q6_1"] == {0.0: "Not chosen", 1.0: "Chosen"}
    assert (tmp_path / "fruit.sps").read_text(encoding="utf-8") == (
        "* Encoding: UTF-8.\n"
        "* Multiple-response sets of fruit.sav, written by surveykit.\n"
        "* Open fruit.sav, run this syntax, then save the file to keep them.\n"
        "MRSETS\n"
        "  /MDGROUP NAME=$Q6 LABEL='Which fruit''s best?' CATEGORYLABELS=VARLABELS\n"
        "    VARIABLES=Q6_1 Q6_2 VALUE=1\n"
        "  /DISPLAY NAME=[$Q6].\n"
    )


def test_spss_option_names_never_take_a_column_name_and_stata_is_unchanged(
    tmp_path: Path,
) -> None:
    df = results().assign(Q6_1=[1.0, 2.0, 3.0, 4.0, 5.0])
    renames = sk.to_spss(df, tmp_path / "n.sav", codebook())
    assert "Q6_1" not in renames  # the results' own column keeps its name
    data, _ = pyreadstat.read_sav(tmp_path / "n.sav")
    assert same(data["Q6_1"], [1, 2, 3, 4, 5])
    assert "VARIABLES=Q6_1_2 Q6_2 VALUE=1" in (tmp_path / "n.sps").read_text()
    sk.to_stata(results(), tmp_path / "n.dta", codebook())
    _, stata = pyreadstat.read_dta(tmp_path / "n.dta")
    assert "Q6_1" not in stata.column_names and "Q6_2" not in stata.column_names


def test_spss_without_multi_questions_writes_no_syntax_and_unknown_options_fail(
    tmp_path: Path,
) -> None:
    sk.to_spss(results().drop(columns="Q6"), tmp_path / "plain.sav", codebook())
    assert sorted(p.name for p in tmp_path.iterdir()) == ["plain.sav"]
    bad = results()
    bad["Q6"] = pd.array(["A;C", "B", None, "", "A"], dtype="string")
    with pytest.raises(ExportError, match=r"Q6: row 0 holds the option 'C'"):
        sk.to_spss(bad, tmp_path / "bad.sav", codebook())
    assert not (tmp_path / "bad.sav").exists() and not (tmp_path / "bad.sps").exists()


@pytest.mark.parametrize("labelled", [False, True], ids=["raw", "labelled"])
def test_stata_reads_back(tmp_path: Path, labelled: bool) -> None:
    df = results()
    source = sk.label(df, codebook()) if labelled else df
    path = tmp_path / "out.dta"
    renames = sk.to_stata(source, path, codebook())
    assert renames == {"has spaces & symbols": "has_spaces___symbols"}
    data, meta = pyreadstat.read_dta(path, user_missing=True)
    assert meta.column_names_to_labels["Q1"] == LONG_TEXT[:80].rstrip()
    assert meta.variable_value_labels["Q1"] == {
        **{int(k): v for k, v in SAT.items()}, "a": "Don't know", "b": "Refused"}
    assert meta.variable_value_labels["Q2"] == {1: "Price", 2: "Quality", "a": "Declined"}
    assert meta.missing_user_values["Q1"] == ["a", "b"]
    assert data["Q1"].tolist()[1::3] == ["a", "b"]  # extended missing .a .b
    assert meta.missing_user_values["Q4"] == ["a"]
    plain, _ = pyreadstat.read_dta(path)
    assert same(plain["Q1"], [5, np.nan, 1, np.nan, np.nan])
    assert same(plain["Q2"], [1, np.nan, 2, np.nan, 1])
    assert same(plain["Q4"], [34, np.nan, 51, np.nan, 20])
    assert plain["Q5"].tolist()[2] == "Zoë's café 👍"
    expected_times = df["completed"].dt.tz_convert("UTC").dt.tz_localize(None)
    assert plain["completed"].astype("datetime64[us]").equals(
        expected_times.astype("datetime64[us]"))


def test_stata_names_are_sanitised_unique_and_reported(tmp_path: Path) -> None:
    df = pd.DataFrame({
        "a" * 40: [1.0], "a" * 41: [2.0], "1st": [3.0], "int": [4.0], "Prénom": ["x"],
        "q-1": [5.0], "q_1": [6.0],
    })
    renames = sk.to_stata(df, tmp_path / "n.dta")
    _, meta = pyreadstat.read_dta(tmp_path / "n.dta")
    assert meta.column_names == ["a" * 32, "a" * 30 + "_2", "v1st", "int_", "Prnom", "q_1",
                                 "q_1_2"]
    assert renames == dict(zip(df.columns, meta.column_names, strict=True)) | {}
    assert all(len(name) <= 32 for name in meta.column_names)


def test_spss_reserved_names_and_many_missing_codes(tmp_path: Path) -> None:
    many = Codebook([Question("BY", "x", "rating", labels={"1": "Lo", "2": "Hi"},
                              missing={"7": "a", "8": "b", "9": "c", "10": "d"})])
    df = pd.DataFrame({"BY": [1, 2, 7, 10]})
    renames = sk.to_spss(df, tmp_path / "m.sav", many)
    assert renames == {"BY": "BY_"}
    _, meta = pyreadstat.read_sav(tmp_path / "m.sav", user_missing=True)
    assert meta.missing_ranges["BY_"] == [{"lo": 7.0, "hi": 10.0}]
    bad = Codebook([Question("Q", "x", "rating", labels={"1": "Lo", "5": "Hi"},
                             missing={"0": "a", "8": "b", "9": "c", "10": "d"})])
    with pytest.raises(ExportError, match="Q: SPSS takes three missing values or one range"):
        sk.to_spss(pd.DataFrame({"Q": [1, 5]}), tmp_path / "bad.sav", bad)
    assert not (tmp_path / "bad.sav").exists()


def test_unknown_answer_is_an_error_and_nothing_is_written(tmp_path: Path) -> None:
    df = results()
    df.loc[2, "Q2"] = None
    df["Q2"] = df["Q2"].cat.add_categories(["Other"])
    df.loc[4, "Q2"] = "Other"
    for write, name in ((sk.to_spss, "x.sav"), (sk.to_stata, "x.dta")):
        with pytest.raises(LabelError, match="Q2: row 4 has 'Other'"):
            write(df, tmp_path / name, codebook())
    assert list(tmp_path.iterdir()) == []


def test_no_codebook_writes_plain_columns(tmp_path: Path) -> None:
    df = pd.DataFrame({"flag": pd.array([True, False, None], dtype="boolean"),
                       "group": pd.Categorical(["a", "b", "a"]), "n": [1, 2, 3]})
    assert sk.to_spss(df, tmp_path / "p.sav") == {}
    data, meta = pyreadstat.read_sav(tmp_path / "p.sav")
    assert same(data["flag"], [1, 0, np.nan])
    assert data["group"].tolist() == ["a", "b", "a"]
    assert meta.variable_measure == {"flag": "scale", "group": "nominal", "n": "scale"}


# ------------------------------------------------------------------ Excel


def proportions_frame() -> pd.DataFrame:
    frame = pd.DataFrame({
        "region": ["North", "North", "South", "South"],
        "question": ["Q2"] * 4,
        "option": ["Price", "Quality", "Price", "Quality"],
        "count": [30, 20, 10, 40],
        "n": [50, 50, 50, 50],
        "n_eff": [50.0, 50.0, 50.0, 50.0],
        "estimate": [0.6, 0.4, 0.2, 0.8],
        "se": [0.069, 0.069, 0.057, 0.057],
        "ci_low": [0.46, 0.27, 0.11, 0.67],
        "ci_high": [0.72, 0.54, 0.33, 0.89],
        "note": [None, None, None, "small group"],
    })
    frame.attrs = {"estimate": "proportions", "question": "Q2", "question_text": "Main reason",
                   "ci": 0.95, "weights": None, "method": "wilson"}
    return frame


def means_frame() -> pd.DataFrame:
    frame = pd.DataFrame({"question": ["Q1"], "n": [120], "n_eff": [120.0],
                          "estimate": [3.725], "se": [0.1], "ci_low": [3.5270],
                          "ci_high": [3.923], "note": [None]})
    frame.attrs = {"estimate": "means", "question": "Q1", "question_text": None, "ci": 0.9}
    return frame


def crosstab_frame() -> pd.DataFrame:
    frame = pd.DataFrame({"North": [60.0, 40.0], "South": [20.0, 80.0]},
                         index=pd.Index(["Price", "Quality"], name="Q2"))
    frame.columns.name = "region"
    frame.attrs = {
        "question": "Q2", "question_text": "Main reason",
        "counts": pd.DataFrame({"North": [30, 20], "South": [10, 40]},
                               index=frame.index).to_dict(),
        "letters": {"North": {"Price": "B", "Quality": ""},
                    "South": {"Price": "", "Quality": "A"}},
        "column_letters": {"North": "A", "South": "B"},
        "test": {"chi2": 16.6667, "dof": 1, "p_value": 4.46e-05, "cramers_v": 0.408,
                 "n": 100, "n_eff": 100.0, "weighted": False},
        "alpha": 0.05,
    }
    return frame


def test_excel_sheets_values_and_formats(tmp_path: Path) -> None:
    path = tmp_path / "report.xlsx"
    sheets = sk.to_excel({"Reason by region": proportions_frame(), "Mean": means_frame(),
                          "Crosstab": crosstab_frame()}, path)
    assert list(sheets) == ["Reason by region", "Mean", "Crosstab"]
    book = load_workbook(path)
    assert book.sheetnames == ["Reason by region", "Mean", "Crosstab"]

    sheet = book["Reason by region"]
    assert sheet["A1"].value == "Main reason" and sheet["A1"].font.bold
    header = [c.value for c in sheet[3]]
    assert header == [*proportions_frame().columns, "95% CI"]
    assert all(c.font.bold for c in sheet[3])
    row = {h: c for h, c in zip(header, sheet[4], strict=True)}
    assert row["estimate"].value == 0.6 and row["estimate"].number_format == PERCENT
    assert row["ci_low"].value == 0.46 and row["ci_low"].number_format == PERCENT
    assert row["ci_high"].number_format == PERCENT
    assert row["95% CI"].value == "46.0% to 72.0%"
    assert row["count"].value == 30 and row["count"].number_format == "#,##0"
    assert row["region"].value == "North"
    assert sheet.cell(7, header.index("note") + 1).value == "small group"

    sheet = book["Mean"]
    header = [c.value for c in sheet[3]]  # title falls back to the question key
    assert sheet["A1"].value == "Q1"
    assert header[-1] == "90% CI"
    row = {h: c for h, c in zip(header, sheet[4], strict=True)}
    assert row["estimate"].value == 3.725 and row["estimate"].number_format == "0.00"
    assert row["90% CI"].value == "3.53 to 3.92"

    sheet = book["Crosstab"]
    assert [c.value for c in sheet[3]] == ["Q2", "North (A)", None, "South (B)", None]
    assert [c.value for c in sheet[4]] == ["Price", 60.0, "B", 20.0, None]
    assert [c.value for c in sheet[5]] == ["Quality", 40.0, None, 80.0, "A"]
    assert sheet["B4"].number_format == PERCENT_POINTS
    below = {sheet.cell(r, 1).value: sheet.cell(r, 2) for r in range(7, 12)}
    assert below["Pearson chi-square"].value == 16.6667
    assert below["df"].value == 1
    assert below["p-value"].value == 4.46e-05 and below["p-value"].number_format == P_VALUE
    assert below["Cramér's V"].value == 0.408
    assert below["n"].value == 100
    assert "Bonferroni" in sheet.cell(13, 1).value


def test_excel_names_sheets_from_attrs_and_sanitises(tmp_path: Path) -> None:
    a, b = proportions_frame(), proportions_frame()
    sheets = sk.to_excel([a, b, means_frame()], tmp_path / "x.xlsx")
    assert list(sheets) == ["proportions Q2", "proportions Q2 (2)", "means Q1"]
    assert sheet_names(["a/b:c*?[x]" + "y" * 40, "History", "", "A", "a"]) == [
        "a_b_c___x_yyyyyyyyyyyyyyyyyyyyy", "history_", "Sheet", "A", "a (2)"]
    with pytest.raises(ExportError, match="tables: nothing to write"):
        sk.to_excel([], tmp_path / "y.xlsx")
    with pytest.raises(ExportError, match=r"tables\['t'\]: expected a DataFrame"):
        sk.to_excel({"t": [1, 2]}, tmp_path / "y.xlsx")  # type: ignore[dict-item]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["x.xlsx"]


def test_excel_nps_and_compare_formats(tmp_path: Path) -> None:
    nps = pd.DataFrame({"responses": [40], "detractors": [10], "passives": [10],
                        "promoters": [20], "percent_detractors": [25.0],
                        "percent_passives": [25.0], "percent_promoters": [50.0], "nps": [25.0],
                        "question": ["Q3"], "n": [40], "n_eff": [40.0], "estimate": [25.0],
                        "se": [13.7], "ci_low": [-1.85], "ci_high": [51.85], "note": [None]})
    nps.attrs = {"estimate": "nps", "question": "Q3", "question_text": "Recommend?"}
    compare = pd.DataFrame({"question": ["Q2"], "option": ["Price"], "group_a": ["W1"],
                            "group_b": ["W2"], "n_a": [50], "n_b": [60], "estimate_a": [0.5],
                            "estimate_b": [0.6], "difference": [0.1], "se": [0.095],
                            "ci_low": [-0.086], "ci_high": [0.286], "statistic": [1.05],
                            "p_value": [0.29], "significant": [False], "test": ["z"],
                            "note": [None]})
    compare.attrs = {"estimate": "compare", "question": "Q2"}
    sk.to_excel({"nps": nps, "waves": compare}, tmp_path / "f.xlsx")
    book = load_workbook(tmp_path / "f.xlsx")
    header = [c.value for c in book["nps"][3]]
    row = {h: c for h, c in zip(header, book["nps"][4], strict=True)}
    assert row["percent_promoters"].number_format == PERCENT_POINTS
    assert row["estimate"].number_format == "0.0" and row["nps"].number_format == "0.0"
    assert row["95% CI"].value == "-1.9 to 51.9"
    header = [c.value for c in book["waves"][3]]
    row = {h: c for h, c in zip(header, book["waves"][4], strict=True)}
    assert row["difference"].value == 0.1 and row["difference"].number_format == PERCENT
    assert row["p_value"].number_format == P_VALUE
    assert row["significant"].value is False
    assert row["95% CI"].value == "-8.6% to 28.6%"


def test_files_get_the_permissions_the_umask_gives(tmp_path: Path) -> None:
    df = results()
    with umask(0o027):
        sk.to_spss(df, tmp_path / "r.sav", codebook())
        sk.to_stata(df, tmp_path / "r.dta", codebook())
        sk.to_excel({"t": proportions_frame()}, tmp_path / "r.xlsx")
        codebook().write(tmp_path / "codebook.xlsx")
    modes = {path.name: mode(path) for path in tmp_path.iterdir()}
    assert modes == dict.fromkeys(
        ["r.sav", "r.sps", "r.dta", "r.xlsx", "codebook.xlsx"], 0o640)
