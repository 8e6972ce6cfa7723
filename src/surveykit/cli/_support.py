"""What the commands of the command line share: options, the client, files read and written.

Every problem a person can cause (a bad option, a file that cannot be read or written, a
platform that cannot be reached or refuses the token) ends as a :class:`CommandError`,
which ``cli.py`` prints as one line on stderr with exit status 2 (usage) or 1 (the rest).
Nothing here imports pandas or the client at import time: ``surveykit --help`` stays fast.
"""

from __future__ import annotations

import contextlib
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import IO, TYPE_CHECKING, Annotated, Any, Final

import typer

from surveykit._util.atomic import atomic_path
from surveykit._util.sheets import write_frame
from surveykit.errors import (
    APIConnectionError,
    AuthenticationError,
    ConfigurationError,
    ExportError,
    SurveykitError,
    ValidationError,
)

if TYPE_CHECKING:
    import pandas as pd

    from surveykit.client import Client

USAGE: Final = 2
"""Exit status of a usage problem: an option or argument the command cannot take."""
FAILURE: Final = 1
"""Exit status of every other problem: configuration, input, output, the platform."""


class CommandError(Exception):
    """A problem the command line reports in one line, with its exit status, and no traceback.

    The command line's own control flow, not a :class:`~surveykit.SurveykitError`: nothing
    outside the command line raises or catches it.

    Attributes:
        code: the exit status, :data:`USAGE` (2) or :data:`FAILURE` (1).
    """

    def __init__(self, message: str, *, code: int = FAILURE) -> None:
        super().__init__(message)
        self.code = code


def usage(message: str) -> CommandError:
    """A :class:`CommandError` with the usage exit status (2)."""
    return CommandError(message, code=USAGE)


BaseUrl = Annotated[
    str | None,
    typer.Option(
        "--base-url",
        envvar="SURVEYKIT_BASE_URL",
        metavar="URL",
        help="The platform's address, e.g. https://api.example.com (default: the embedded "
        "sandbox).",
        show_default=False,
    ),
]
Token = Annotated[
    str | None,
    typer.Option(
        "--token",
        envvar="SURVEYKIT_TOKEN",
        metavar="TOKEN",
        help="The access token.",
        show_default=False,
    ),
]
AllowInsecureHttp = Annotated[
    bool,
    typer.Option(
        "--allow-insecure-http",
        help="Send the token over plain http to another machine (not only to this one).",
    ),
]

ForSpreadsheets = Annotated[
    bool,
    typer.Option(
        "--for-spreadsheets",
        help="A .csv --out for people to open in Excel or LibreOffice: text that starts "
        "with = + - @ or a tab or CR gets a ' in front, so it is never computed as a "
        "formula. Off: the file keeps the data exactly. (.xlsx keeps text as text either "
        "way.)",
    ),
]

IdleTimeout = Annotated[
    float,
    typer.Option(
        metavar="SECONDS",
        help="Close a connection that sends no complete request head within this many "
        "seconds of connecting or of its previous answer.",
    ),
]

MaxConnections = Annotated[
    int | None,
    typer.Option(
        min=1,
        metavar="N",
        help="Connections open at once; one more closes the one idle the longest "
        "(default 256, or half the free file descriptors if fewer).",
        show_default=False,
    ),
]


def check_idle_timeout(seconds: float) -> float:
    """``--idle-timeout`` checked: a usage error (2) unless it is above 0 seconds."""
    if not seconds > 0:  # also NaN
        raise usage(f"--idle-timeout: expected seconds > 0, got {seconds:g}")
    return seconds


SPREADSHEET_FORMULA_STARTS: Final = ("=", "+", "-", "@", "\t", "\r")
"""What a spreadsheet computes a CSV field by, at its start (OWASP, CSV injection)."""

SANDBOX_NOTES: list[str] = []
"""The notice that a command ran on the embedded sandbox, printed by ``cli.py`` when the
command ends: on stderr after a success; after a failure, the one line of the problem says
"on the embedded sandbox" instead, so that a problem is always exactly one line."""

_SANDBOX_NOTE = (
    "surveykit: no --base-url or SURVEYKIT_BASE_URL: using the embedded sandbox (simulated "
    "platform, no network)"
)


def make_client(
    base_url: str | None, token: str | None, *, allow_insecure_http: bool, writes: bool = False
) -> Client:
    """The client of ``--base-url`` (or the embedded sandbox, said on stderr at the end).

    ``writes`` adds that nothing the command writes on the throwaway sandbox persists.

    Raises:
        CommandError: a base URL without a scheme, or a token over plain http to another
            machine without ``--allow-insecure-http`` (usage, 2).
    """
    from surveykit.client import Client

    if not base_url:
        note = _SANDBOX_NOTE
        if writes:
            note += "; nothing it writes persists after this command"
        SANDBOX_NOTES.append(note)
        return Client.sandbox()
    try:
        return Client(base_url, token or None, allow_insecure_http=allow_insecure_http)
    except ConfigurationError as exc:
        raise usage(_option_words(str(exc))) from None


def _option_words(message: str) -> str:
    """A client message in the command line's words: options, not keyword arguments."""
    message = message.replace("pass allow_insecure_http=True", "pass --allow-insecure-http")
    if message.startswith("base_url: "):
        message = "--base-url (or SURVEYKIT_BASE_URL): " + message.removeprefix("base_url: ")
    return message.replace("credentials", "the token")


def check_token(client: Client) -> None:
    """Before a batch, one read-only request: stop at a wrong token or an unreachable host.

    A batch reports such failures row by row; the command line rather says once what is
    wrong, before anything is sent. The request lists the account's keywords.

    Raises:
        CommandError: the platform refused the token, or could not be reached.
    """
    if client.embedded is not None:
        return
    try:
        client.keywords.list()
    except (AuthenticationError, APIConnectionError) as exc:
        raise CommandError(describe_error(exc) + "; nothing was sent") from None
    except SurveykitError:
        return  # anything else (a 403 for keywords, ...) is for the batch's own requests


def describe_error(exc: BaseException) -> str:
    """One line for an error of the platform or the client, with what to check."""
    text = " ".join(str(exc).split())
    if isinstance(exc, AuthenticationError):
        given = bool(
            getattr(exc, "credentials_sent", exc.request.headers.get("Authorization") is not None)
        )
        what = "refused the token" if given else "needs a token"
        return f"the platform {what} ({exc.status_code}): check --token or SURVEYKIT_TOKEN ({text})"
    if isinstance(exc, APIConnectionError):
        return f"cannot reach the platform: check --base-url or SURVEYKIT_BASE_URL ({text})"
    if isinstance(exc, ValidationError | ConfigurationError):
        return _option_words(text)
    return text


def exit_code_of(exc: SurveykitError | CommandError) -> int:
    """The exit status of an error that reached the command line."""
    if isinstance(exc, CommandError):
        return exc.code
    if isinstance(exc, ValidationError | ConfigurationError):
        return USAGE  # an argument or a setting the client refused before sending
    return FAILURE


# .txt is tab-separated as Excel's "Text (Tab delimited)" saves it.
TAB_SEPARATED: Final = (".tsv", ".tab", ".txt")
READABLE: Final = (".csv", *TAB_SEPARATED, ".xlsx", ".xls", ".parquet")
WRITABLE: Final = (".csv", ".parquet", ".json", ".xlsx")
CHARTS: Final = (".png", ".svg", ".pdf")
_UTF16_BOMS: Final = (b"\xff\xfe", b"\xfe\xff")
_ZIP: Final = b"PK\x03\x04"
_SQLITE: Final = b"SQLite format 3\x00"


def read_table(path: Path) -> pd.DataFrame:
    """Read a table by the file's suffix (any letter case), every text column as text.

    CSV and tab-separated files must be UTF-8 (with or without a BOM; Excel's UTF-16
    "Unicode Text" is read too). The first row names the columns; the row numbers of the
    frame count the rows under it from 1, as the outcome files show them.

    Raises:
        CommandError: no such file or a suffix it does not read (usage, 2); a file that is
            empty, binary, not UTF-8, or not the workbook or Parquet file its suffix says,
            or that has no rows (1). The message names the file and the byte or line.
    """
    import pandas as pd

    if not path.exists():
        raise usage(f"{path}: no such file")
    if path.is_dir():
        raise usage(f"{path}: is a folder, not a file")
    suffix = path.suffix.lower()
    if suffix not in READABLE:
        kind = f"a {suffix!r} file" if suffix else "a file without a suffix"
        raise usage(f"{path}: cannot tell how to read {kind}; supported: {', '.join(READABLE)}")
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise CommandError(f"{path}: cannot read it: {exc.strerror or exc}") from None
    if not data:
        raise CommandError(f"{path}: the file is empty")
    if suffix == ".parquet":
        frame = _read_parquet(path, data)
    elif suffix in (".xlsx", ".xls"):
        frame = _read_excel(path, data, suffix)
    else:
        text = _text_of(path, data)
        sep = "\t" if suffix in TAB_SEPARATED else ","
        frame = _read_text(path, text, sep)
    if len(frame.columns) == 0 or len(frame) == 0:
        raise CommandError(f"{path}: no rows under the header: nothing to do")
    frame.index = pd.RangeIndex(1, len(frame) + 1, name="row")
    return frame


def _read_parquet(path: Path, data: bytes) -> pd.DataFrame:
    import pandas as pd

    if not data.startswith(b"PAR1"):
        raise CommandError(f"{path}: not a Parquet file (it does not start with PAR1)")
    try:
        return pd.read_parquet(path)
    except (OSError, ValueError) as exc:  # pyarrow's ArrowInvalid is a ValueError
        raise CommandError(f"{path}: a damaged Parquet file: {_first_line(exc)}") from None


def _read_excel(path: Path, data: bytes, suffix: str) -> pd.DataFrame:
    import pandas as pd

    if suffix == ".xlsx" and not data.startswith(_ZIP):
        raise CommandError(
            f"{path}: not an Excel workbook (an .xlsx file is a zip archive; this one is "
            "not): save it from Excel as .xlsx, or name it after what it is (.csv)"
        )
    try:
        return pd.read_excel(path, dtype=str)
    except ImportError as exc:
        raise CommandError(
            f"{path}: reading {suffix} files needs {exc.name or 'an Excel reader'} "
            f"(pip install {exc.name or 'xlrd'}), or save the file as .xlsx or .csv"
        ) from None
    except Exception as exc:  # openpyxl and xlrd raise many kinds for a damaged workbook
        raise CommandError(f"{path}: a damaged Excel workbook: {_first_line(exc)}") from None


def _text_of(path: Path, data: bytes) -> str:
    if data.startswith(_UTF16_BOMS):
        try:
            return data.decode("utf-16")
        except UnicodeDecodeError as exc:
            raise CommandError(f"{path}: damaged UTF-16 text at byte offset {exc.start}") from None
    nul = data.find(b"\x00")
    if nul >= 0:
        raise CommandError(
            f"{path}: not a text file (a NUL byte at byte offset {nul}); save it as CSV UTF-8"
        )
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        byte = data[exc.start]
        raise CommandError(
            f"{path}: not UTF-8 text (byte 0x{byte:02x} at byte offset {exc.start}, line "
            f"{line}; Latin-1 or Windows-1252?): save it as CSV UTF-8"
        ) from None


def _read_text(path: Path, text: str, sep: str) -> pd.DataFrame:
    import io

    import pandas as pd

    # Every column as text, so phone numbers keep their leading zeros and + signs.
    try:
        return pd.read_csv(
            io.StringIO(text), sep=sep, dtype=str, keep_default_na=False, na_values=[""]
        )
    except pd.errors.EmptyDataError:
        raise CommandError(f"{path}: no header row (only blank lines)") from None
    except (pd.errors.ParserError, ValueError) as exc:
        raise CommandError(f"{path}: cannot read it as a table: {_first_line(exc)}") from None


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def check_output(path: Path, option: str, suffixes: tuple[str, ...] = WRITABLE) -> None:
    """Refuse, before any work is done, an output file that cannot be written.

    The folder must exist (it is not created) and take a new file; the path must not be a
    folder, and its suffix one the command writes (a device or a pipe without a suffix,
    such as ``/dev/stdout``, gets the first of ``suffixes``).

    Raises:
        CommandError: an unsupported suffix (usage, 2); a folder, a missing folder, or a
            folder that takes no file (1).
    """
    if path.is_dir():
        example = path / f"out{suffixes[0]}"
        raise CommandError(f"{option} {path}: is a folder; give a file name, such as {example}")
    suffix = path.suffix.lower()
    special = path.exists() and not path.is_file()  # a device or a pipe: /dev/stdout
    if suffix not in suffixes and not (special and not suffix):
        kind = f"a {suffix!r} file" if suffix else "a file without a suffix"
        raise usage(f"{option} {path}: cannot write {kind}; supported: {', '.join(suffixes)}")
    folder = path.parent
    if not folder.exists():
        raise CommandError(
            f"{option} {path}: no folder {folder} (it is not created): create it first"
        )
    if not folder.is_dir():
        raise CommandError(f"{option} {path}: {folder} is not a folder")
    if special:
        return  # written straight, and checked as it is written
    try:
        with tempfile.NamedTemporaryFile(dir=folder, prefix=".surveykit-", delete=True):
            pass
    except OSError as exc:
        raise CommandError(
            f"{option} {path}: cannot write in {folder}: {exc.strerror or exc}"
        ) from None


def check_for_spreadsheets(path: Path, for_spreadsheets: bool, option: str = "--out") -> None:
    """Refuse ``--for-spreadsheets`` with an output that is not .csv or .xlsx (usage, 2)."""
    if for_spreadsheets and path.suffix.lower() not in (".csv", ".xlsx"):
        raise usage(
            f"--for-spreadsheets: only for a .csv {option} (a {path.suffix or 'file'} file "
            "is not opened as a spreadsheet; an .xlsx file keeps text as text anyway)"
        )


def spreadsheet_text(value: str) -> str:
    """``value`` with a ``'`` in front if a spreadsheet would compute it (``=1+1``)."""
    return "'" + value if value.startswith(SPREADSHEET_FORMULA_STARTS) else value


def guard_for_spreadsheets(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` with every text (and column name) a spreadsheet would compute quoted.

    OWASP's advice for CSV files that people open: a field that starts with ``=``, ``+``,
    ``-``, ``@``, a tab or a CR gets a leading ``'``. Numbers are not text, so stay as
    they are.
    """
    import pandas as pd

    def guard(value: Any) -> Any:
        return spreadsheet_text(value) if isinstance(value, str) else value

    out = frame.copy()
    for name in out.columns:
        column = out[name]
        if column.dtype == object or isinstance(column.dtype, pd.StringDtype):
            out[name] = column.map(guard, na_action="ignore").astype(column.dtype)
        elif isinstance(column.dtype, pd.CategoricalDtype):
            out[name] = column.cat.rename_categories(guard)
    out.columns = [guard(name) for name in out.columns]
    return out


def write_table(
    frame: pd.DataFrame,
    path: Path,
    *,
    option: str = "--out",
    for_spreadsheets: bool = False,
) -> None:
    """Write a table by the file's suffix: .csv, .parquet, .json, .xlsx.

    A named index (the input's ``row``) is written as a column; an unnamed one is not.
    A CSV file has CRLF line ends (RFC 4180), so a field with a CR alone is quoted and
    read back whole; ``for_spreadsheets`` quotes what a spreadsheet would compute
    (:func:`guard_for_spreadsheets`). An .xlsx file's text is always text (no formula).
    """
    frame = frame.reset_index() if frame.index.name is not None else frame
    suffix = path.suffix.lower()

    def write(target: IO[bytes]) -> None:
        if suffix == ".parquet":
            frame.to_parquet(target, index=False)
        elif suffix == ".json":
            frame.to_json(target, orient="records", date_format="iso", indent=1, force_ascii=False)
        elif suffix == ".xlsx":
            plain = frame.copy()
            for column in plain.select_dtypes(include=["datetimetz"]).columns:
                plain[column] = plain[column].dt.tz_localize(None)  # Excel has no time zones
            write_frame(plain, target)  # every text as text: an answer "=1+1" is no formula
        else:
            table = guard_for_spreadsheets(frame) if for_spreadsheets else frame
            # CRLF: Python's csv module quotes a field with a lone CR only if the line end
            # holds one; unquoted, it would split the row (and start a new one with "=").
            table.to_csv(target, index=False, encoding="utf-8", lineterminator="\r\n")

    try:
        write_file(path, write, option=option)
    except ExportError as exc:
        raise CommandError(
            f"{option} {path}: {exc}; write .csv, .parquet or .json instead"
        ) from None


def write_file(path: Path, write: Callable[[IO[bytes]], Any], *, option: str) -> None:
    """Write a file whole or not at all: into a temporary name, moved into place when done.

    A device or a pipe (``/dev/stdout``) is written straight. Every write error, including
    one seen only when the data is flushed (a full disk, ``/dev/full``), is reported.

    Raises:
        CommandError: the file could not be written (1).
    """
    try:
        if path.exists() and not path.is_file():
            with open(path, "wb") as stream:
                write(stream)
            return
        # The shared writer: beside the file, then renamed over it, with the permissions
        # the umask gives; its temporary names let the next write clear a killed one's.
        with atomic_path(path) as temporary, open(temporary, "wb") as stream:
            write(stream)
            stream.flush()
    except OSError as exc:
        raise CommandError(f"{option} {path}: cannot write it: {exc.strerror or exc}") from None


def check_sqlite_file(
    path: Path, option: str, what: str, tables: tuple[str, ...], example: str
) -> None:
    """Refuse a path for an SQLite file (a journal, an event store) that cannot be one.

    A new file is fine if its folder exists; an existing one must be an SQLite file, and
    one with tables must have ``tables`` (a database of something else is not written to).
    ``example`` is a file name the message suggests when ``path`` is a folder.

    Raises:
        CommandError: a folder, a missing folder, or a file that is not ``what`` (1).
    """
    import sqlite3

    if path.is_dir():
        raise CommandError(
            f"{option} {path}: is a folder; give a file name, such as {path / example}"
        )
    if not path.parent.is_dir():
        raise CommandError(f"{option} {path}: no folder {path.parent} (it is not created)")
    if not path.exists() or path.stat().st_size == 0:
        return
    wrong = CommandError(
        f"{option} {path}: not a {what}; give a new file name, or the {what} this command "
        "wrote before"
    )
    try:
        with open(path, "rb") as stream:
            head = stream.read(len(_SQLITE))
    except OSError as exc:
        raise CommandError(f"{option} {path}: cannot read it: {exc.strerror or exc}") from None
    if head != _SQLITE:
        raise wrong
    try:
        with contextlib.closing(
            sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
        ) as db:
            found = {
                row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type='table'")
            }
    except sqlite3.Error as exc:
        raise CommandError(f"{option} {path}: a damaged SQLite file: {exc}") from None
    if found and not set(tables) <= found:
        raise wrong
