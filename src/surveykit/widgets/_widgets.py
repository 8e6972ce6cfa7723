"""ipywidgets for notebooks: explore results, compose a batch, watch callback events.

Needs ipywidgets and matplotlib: ``pip install 'surveykit[notebook]'``. Each widget is an
object with a ``.widget`` (display it, or let the object display itself) and plain methods
that its buttons call, so the logic can be driven and tested without a browser.
"""

from __future__ import annotations

import html
import io
import time
from collections.abc import Sequence
from datetime import UTC, date, datetime
from typing import TYPE_CHECKING, Any

import pandas as pd

from surveykit import analysis, plots
from surveykit.batch import OUTCOMES, BatchInterrupted, preview_batch, send_batch
from surveykit.errors import ValidationError
from surveykit.optouts import as_opt_outs
from surveykit.widgets._html import preview_table
from surveykit.widgets._html import table as _table

PROGRESS_INTERVAL = 0.1
"""Seconds between redraws of a batch's progress bar."""

if TYPE_CHECKING:
    import ipywidgets

__all__ = ["BatchComposer", "EventsMonitor", "ResultsExplorer"]

PREVIEW_ROWS = 5
COMMON_ZONES = (
    "Europe/London",
    "Europe/Paris",
    "America/New_York",
    "America/Chicago",
    "America/Los_Angeles",
    "Australia/Sydney",
    "UTC",
)
"""Zones the composer's Timezone box suggests (any IANA name may be typed)."""


def _widgets() -> Any:
    try:
        import ipywidgets
    except ImportError as exc:  # pragma: no cover - depends on the installation
        raise ImportError(
            "surveykit.widgets needs ipywidgets: pip install 'surveykit[notebook]'"
        ) from exc
    return ipywidgets


def _png(fig: Any) -> bytes:
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=90)
    return buffer.getvalue()


class _Displayable:
    widget: ipywidgets.Widget

    def _ipython_display_(self) -> None:
        from IPython.display import display

        display(self.widget)  # type: ignore[no-untyped-call]


class ResultsExplorer(_Displayable):
    """Pick a survey, a since date and a question; the table and the chart follow.

    Args:
        client: a sync :class:`~surveykit.Client`.
        surveys: the survey references to offer; by default the ones found in ``*`` results.

    Example:
        >>> sk.widgets.ResultsExplorer(client)      # doctest: +SKIP
    """

    def __init__(self, client: Any, *, surveys: Sequence[str] | None = None) -> None:
        w = _widgets()
        self.client = client
        if surveys is None:
            everything = client.surveys.results("*")
            column = "surveyReference"
            surveys = (
                sorted(everything[column].dropna().astype(str).unique())
                if (column in everything.columns)
                else ["*"]
            )
        self.survey = w.Dropdown(options=list(surveys), description="Survey")
        self.since = w.DatePicker(description="Since")
        self.question = w.Dropdown(options=[], description="Question")
        # A Label, not HTML: ``.value`` is the sentence itself, bold by its style.
        self.summary = w.Label(value="", style={"font_weight": "bold"})
        self.table = w.HTML()
        self.chart = w.Image(format="png")
        self.empty = w.HTML(value="", layout=w.Layout(display="none"))
        self.frame = pd.DataFrame()
        self.survey.observe(self._reload, names="value")
        self.since.observe(self._reload, names="value")
        self.question.observe(self._redraw, names="value")
        self.widget = w.VBox(
            [
                w.HBox([self.survey, self.since, self.question]),
                self.summary,
                self.empty,
                self.chart,
                self.table,
            ]
        )
        self.reload()

    def _reload(self, _: Any = None) -> None:
        self.reload()

    def _redraw(self, _: Any = None) -> None:
        self.redraw()

    def reload(self) -> None:
        """Fetch the chosen survey's results (since the chosen date) and redraw."""
        since = self.since.value
        moment = (
            datetime(since.year, since.month, since.day, tzinfo=UTC)
            if isinstance(since, date)
            else None
        )
        self.frame = self.client.surveys.results(self.survey.value, since=moment)
        questions = analysis.question_columns(self.frame)
        current = self.question.value
        self.question.options = questions
        if current in questions:
            self.question.value = current
        elif questions:
            self.question.value = questions[0]
        self.redraw()

    def redraw(self) -> None:
        """Update the summary, the chart of the chosen question and the table.

        With no results (or no answers to the question) the chart is hidden and
        ``.empty`` says why, instead of an empty image the browser draws as broken.
        """
        funnel = analysis.response_funnel(self.frame) if len(self.frame) else None
        stages: dict[str, int] = (
            {str(k): int(v) for k, v in zip(funnel["stage"], funnel["respondents"], strict=True)}
            if funnel is not None
            else {}
        )
        completed = stages.get("completed", 0)
        self.summary.value = (
            f"{self.survey.value}: {len(self.frame):,} respondents, {completed:,} completed"
        )
        question = self.question.value
        reason = self._empty_reason(question)
        if reason is None:
            self.chart.value = _png(plots.plot_distribution(self.frame, question))
            shown = [c for c in ("respondentId", "channel", "completed") if c in self.frame]
            self.table.value = _table(self.frame[[*shown, question]])
            self.empty.value, self.empty.layout.display = "", "none"
            self.chart.layout.display = None
            self.table.layout.display = None
        else:
            self.chart.value = b""
            self.chart.layout.display = "none"
            self.table.value = ""
            self.table.layout.display = "none"
            self.empty.value = (
                "<div style='padding:1.5em;color:#555;border:1px dashed #BBB;"
                f"text-align:center'>{html.escape(reason)}</div>"
            )
            self.empty.layout.display = None

    def _empty_reason(self, question: str | None) -> str | None:
        """Why there is nothing to draw, or None when there is."""
        survey = str(self.survey.value)
        since = self.since.value
        if not len(self.frame):
            return (
                f"No results for {survey} since {since:%Y-%m-%d}: pick an earlier date."
                if isinstance(since, date)
                else f"No results for {survey} yet."
            )
        if not question:
            return f"{survey} has no question columns to draw."
        if not self.frame[question].notna().any():
            return f"No answers to {question} yet."
        return None


class BatchComposer(_Displayable):
    """Write a message template, see it rendered for real rows, then send.

    The preview (first rows, segments, rejections, send times) follows every edit. Sending
    takes two clicks unless the test toggle is on; it runs :func:`surveykit.send_batch`,
    moves ``.progress`` (a bar of rows with an outcome) and ``.outcomes`` (rows per outcome)
    as rows finish, and keeps the result in ``.result``.

    Args:
        client: a sync :class:`~surveykit.Client`.
        df: the recipients, one row each.
        source: the sender to start with.
        message: the template to start with.
        destination: the column with the numbers (or addresses for email).
        journal: an SQLite journal for the send (so a second run resumes, never repeats).
        links: a column of URLs to shorten per row, used as ``{link}`` in the template
            (the ``Links`` dropdown starts on it; the preview shows a placeholder link).
        opt_outs: an :class:`~surveykit.OptOutList` or its path; its rows get the outcome
            ``opted_out`` and nothing is sent to them. The preview counts and lists them.
        timezone: read the windows in each respondent's local time (the ``Timezone``
            box starts on it): ``"auto"`` (from the number), a column of zone names, or a
            zone such as ``"Europe/London"``; empty for the platform's clock. The preview
            then shows each row's ``local_send_time`` and ``timezone``.

    The names of the arguments and of the options the controls give are those of
    :func:`surveykit.send_batch` (one definition, ``surveykit.batch._options``).

    Every edit clears what the last send showed (its ``Done`` line, the bar and the
    counts): they described other settings.
    """

    def __init__(
        self,
        client: Any,
        df: pd.DataFrame,
        *,
        source: str = "",
        message: str = "",
        destination: str | None = None,
        journal: str | None = None,
        links: str | None = None,
        opt_outs: Any = None,
        timezone: str | None = None,
    ) -> None:
        w = _widgets()
        self.client, self.df = client, df
        self.destination, self.journal = destination, journal
        if links is not None and links not in df.columns:
            raise ValidationError(
                f"links: no column {links!r}; columns are {[str(c) for c in df.columns]}"
            )
        if opt_outs is not None:
            opt_outs = as_opt_outs(opt_outs)
        self.opt_outs = opt_outs
        # By index: a Dropdown given value=None selects nothing and shows a blank box.
        link_options = [("(none)", None), *((str(c), c) for c in df.columns)]
        index = [value for _, value in link_options].index(links)
        self.links = w.Dropdown(options=link_options, index=index, description="Links")
        self.template = w.Textarea(
            value=message, description="Message", layout=w.Layout(width="90%", height="80px")
        )
        column = w.Layout(width="420px")  # the left boxes, so the right labels line up
        self.source = w.Text(value=source, description="Source", layout=column)
        self.channel = w.Dropdown(
            options=["sms", "whatsapp", "facebook", "whatsapp_template", "email"],
            value="sms",
            description="Channel",
        )
        self.subject = w.Text(value="", description="Subject", layout=column)
        # Read on Enter or blur, not per key: "Europe/Lon" would flash an error meanwhile.
        wide = {"continuous_update": False, "layout": column}
        example = "Mon-Fri 09:00-18:00; Sat 10:00-14:00"
        self.windows = w.Text(description="Windows", placeholder=example, **wide)
        self.timezone = w.Combobox(
            value=timezone or "",
            options=["auto", *(str(c) for c in df.columns), *COMMON_ZONES],
            ensure_option=False,
            description="Timezone",
            placeholder="(platform clock) auto, a column or a zone",
            **wide,
        )
        self.test = w.Checkbox(value=True, description="Test only (nothing is sent)")
        self.send_button = w.Button(description="Send", button_style="primary")
        self.preview = w.HTML()
        self.status = w.HTML()
        # A widget bar, not tqdm: what a button's handler prints is not shown in JupyterLab,
        # while a widget's new value is.
        self.progress = w.IntProgress(value=0, min=0, max=max(len(df), 1), description="Rows")
        self.outcomes = w.Label(value="")
        self._counts: dict[str, int] = {}
        self._drawn = float("-inf")  # time.monotonic() of the last redraw
        self.result: Any = None
        self._armed = False
        for control in (
            self.template,
            self.source,
            self.channel,
            self.subject,
            self.windows,
            self.timezone,
            self.links,
            self.test,
        ):
            control.observe(self._changed, names="value")
        self.send_button.on_click(lambda _: self.click_send())
        self.widget = w.VBox(
            [
                self.template,
                w.HBox([self.source, self.channel]),
                w.HBox([self.subject, self.links]),
                w.HBox([self.windows, self.timezone]),
                self.test,
                self.preview,
                w.HBox([self.send_button, self.status]),
                w.HBox([self.progress, self.outcomes]),
            ]
        )
        self.update_preview()

    def _options(self) -> dict[str, Any]:
        windows = [part.strip() for part in self.windows.value.split(";") if part.strip()]
        options: dict[str, Any] = {
            "source": self.source.value.strip(),
            "channel": self.channel.value,
            "destination": self.destination,
            "windows": windows or None,
            "timezone": self.timezone.value.strip() or None,
            "links": self.links.value,
            "opt_outs": self.opt_outs,
        }
        if self.channel.value == "email":
            options.update(content=self.template.value, subject=self.subject.value)
        else:
            options["message"] = self.template.value
        return options

    def _changed(self, _: Any = None) -> None:
        self._armed = False
        self.clear_send_state()
        self.update_preview()

    def clear_send_state(self) -> None:
        """Empty the status line, the bar and the counts of the last send."""
        self.status.value = ""
        self.progress.value, self.progress.bar_style = 0, ""
        self.outcomes.value = ""
        self._counts = {}

    def update_preview(self) -> None:
        """Render the template for the first rows and show the batch's totals (or the error)."""
        try:
            preview = preview_batch(self.client, self.df, **self._options())
        except ValueError as exc:
            self.preview.value = f"<span style='color:#B2182B'>{html.escape(str(exc))}</span>"
            self.send_button.disabled = True
            self.clear_send_state()  # a Done line under an error reads as if it still held
            return
        self.send_button.disabled = preview.totals["ready"] == 0
        totals = preview.totals
        rejected = "".join(
            f"<li>{html.escape(reason)}: {count}</li>"
            for reason, count in totals["rejected"].items()
        )
        columns = ["destination", "text", "segments", "outcome"]
        if "local_send_time" in preview.frame.columns:
            columns += ["local_send_time", "timezone"]
        shown = preview.frame.head(PREVIEW_ROWS)[columns]
        opted = preview.frame[preview.frame["outcome"] == "opted_out"]
        self.preview.value = (
            f"<b>{totals['ready']:,}</b> of {totals['rows']:,} rows ready, "
            f"<b>{totals['segments']:,}</b> SMS segments; first send "
            f"{totals['first_send']}, last {totals['last_send']}"
            + (f"<ul>{rejected}</ul>" if rejected else "")
            + preview_table(shown)
            + (
                f"<p><b>{len(opted):,}</b> opted out (not sent):</p>"
                + _table(opted[["destination", "outcome"]], PREVIEW_ROWS)
                if len(opted)
                else ""
            )
        )

    def click_send(self) -> None:
        """What the Send button does: arm on the first click, send on the second."""
        if not self.test.value and not self._armed:
            self._armed = True
            self.status.value = (
                f"<b>Send to {len(self.df):,} rows for real?</b> Click Send again to confirm."
            )
            return
        self._armed = False
        self.send()

    def _show_progress(self, counts: dict[str, int]) -> None:
        # Called for every row, under the batch's lock: redraw at most every
        # PROGRESS_INTERVAL (each redraw is two messages to the front end), and at the end.
        self._counts = counts
        now = time.monotonic()
        if now - self._drawn >= PROGRESS_INTERVAL or sum(counts.values()) >= len(self.df):
            self._drawn = now
            self._draw_progress()

    def _draw_progress(self) -> None:
        counts = self._counts
        self.progress.value = sum(counts.values())
        self.outcomes.value = ", ".join(f"{k} {counts[k]}" for k in OUTCOMES if counts.get(k))

    def send(self) -> Any:
        """Run the batch now with the current settings; returns and keeps the result."""
        self.send_button.disabled = True
        self.progress.max, self.progress.value = max(len(self.df), 1), 0
        self.progress.bar_style, self.outcomes.value = "", ""
        self._counts, self._drawn = {}, float("-inf")  # the first row draws
        try:
            self.result = send_batch(
                self.client,
                self.df,
                **self._options(),
                test=self.test.value,
                journal=self.journal,
                progress=self._show_progress,
            )
        except BatchInterrupted as stopped:
            self.result = stopped.result
            self.progress.bar_style = "warning"
            self.status.value = "Stopped: rows not started are <i>skipped</i>. " + (
                "Send again to resume: the journal keeps the rows done."
                if self.journal
                else "Without a journal, sending again sends every row again."
            )
            raise
        finally:
            self._draw_progress()  # the last counts, whatever the throttle skipped
            self.send_button.disabled = False
        self.progress.bar_style = "success"
        counts = ", ".join(f"{k} {v}" for k, v in self.result.summary.items())
        self.status.value = html.escape(f"Done: {counts}")
        return self.result


class EventsMonitor(_Displayable):
    """Callback events as they arrive: counts by type and the latest events.

    Call :meth:`refresh` (or pass ``auto=True`` to refresh every ``interval`` seconds in a
    background thread while the listener runs).
    """

    def __init__(
        self, listener: Any, *, rows: int = 10, auto: bool = False, interval: float = 1.0
    ) -> None:
        w = _widgets()
        self.listener, self.rows = listener, rows
        self.counts = w.HTML()
        self.latest = w.HTML()
        self.refresh_button = w.Button(description="Refresh")
        self.refresh_button.on_click(lambda _: self.refresh())
        self.widget = w.VBox([w.HBox([self.counts, self.refresh_button]), self.latest])
        self._stop: Any = None
        self.refresh()
        if auto:
            self.start(interval)

    def refresh(self) -> pd.DataFrame:
        """Read the listener's events and update the display; returns the events."""
        events: pd.DataFrame = self.listener.events
        if events.empty:
            self.counts.value = "<i>no events yet</i>"
            self.latest.value = ""
            return events
        summary = analysis.event_summary(events, by=("Type",))
        name = summary.columns[0]
        self.counts.value = f"<b>{len(events):,} events</b>: " + ", ".join(
            f"{html.escape(str(t))} {n}"
            for t, n in zip(summary[name], summary["events"], strict=True)
        )
        self.latest.value = _table(events.tail(self.rows).iloc[::-1], self.rows)
        return events

    def start(self, interval: float = 1.0) -> None:
        """Refresh every ``interval`` seconds in a daemon thread until :meth:`stop`."""
        import threading

        self.stop()
        stop = threading.Event()
        self._stop = stop

        def loop() -> None:
            while not stop.wait(interval):
                self.refresh()

        threading.Thread(target=loop, daemon=True, name="surveykit-events-monitor").start()

    def stop(self) -> None:
        """Stop refreshing in the background."""
        if self._stop is not None:
            self._stop.set()
            self._stop = None
