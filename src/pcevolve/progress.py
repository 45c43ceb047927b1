"""Progress of every long step: a bar on a terminal, a line every few seconds anywhere else.

A run is often watched through a log (``make demo > log 2>&1``, a CI job, a batch scheduler), where a bar
redraws into one unreadable line or, disabled, leaves minutes of silence. :func:`progress_bar` therefore
returns a tqdm bar when standard error is a terminal and a :class:`LineProgress` otherwise: one line at most
every ``PCEVOLVE_PROGRESS_SECONDS`` seconds (default 10) with the share done, the time spent and, where the steps
are alike, an estimate of the time left, and one line when the step ends (a step shorter than that prints only its
last line; one that did nothing, e.g. failed at once, prints none).

Both go to standard error, the console of the machine that holds the private data; nothing here is written
to the run folder (a private stage's duration stays in ``secure/``).
"""

from __future__ import annotations

import os
import sys
import threading
import time
import weakref
from collections.abc import Callable
from typing import IO, Any, Protocol, Self

from tqdm.auto import tqdm

DEFAULT_INTERVAL_SECONDS = 10.0


class ConsoleLine(str):
    """A line for the console of the machine that holds the private data: it states exact private counts (how many
    private samples a pool shares, which classes hold fewer than two, n beside δ). ``redacted`` says the same
    without them, for whatever may be kept or shared — the Python API's log records, which reach notebooks and log
    files. Code that passes a line on where it may be kept sends ``redacted`` (:func:`loggable`).
    """

    redacted: str

    def __new__(cls, text: str, redacted: str) -> "ConsoleLine":
        line = super().__new__(cls, text)
        line.redacted = redacted
        return line

    def prefixed(self, prefix: str) -> "ConsoleLine":
        """The same line, both forms, after ``prefix`` (e.g. ``"warning: "``)."""
        return ConsoleLine(prefix + str(self), prefix + self.redacted)


def loggable(line: str) -> str:
    """``line`` as it may be kept: a :class:`ConsoleLine` without its exact private counts, any other as it is."""
    return line.redacted if isinstance(line, ConsoleLine) else line


class Progress(Protocol):
    """What the pipeline's steps call on a progress reporter (a subset of tqdm's bar)."""

    def update(self, n: int = 1) -> Any: ...

    def set_postfix(self, ordered_dict: Any = None, refresh: bool = True, **kwargs: Any) -> Any: ...

    def set_postfix_str(self, s: str = "", refresh: bool = True) -> Any: ...

    def close(self) -> Any: ...


def _interval() -> float:
    text = os.environ.get("PCEVOLVE_PROGRESS_SECONDS", "")
    try:
        value = float(text)
    except ValueError:
        return DEFAULT_INTERVAL_SECONDS
    return value if value >= 0 else DEFAULT_INTERVAL_SECONDS


def _duration(seconds: float) -> str:
    seconds = max(0, round(seconds))
    minutes, seconds = divmod(seconds, 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}:{minutes:02d}:{seconds:02d}" if hours else f"{minutes}:{seconds:02d}"


class LineProgress:
    """tqdm's interface, reported as plain lines: for logs and pipes, where a bar cannot redraw.

    Args:
        total: Steps planned (``None``: unknown, no share or estimate is shown).
        desc: What the step is, e.g. ``"DP fine-tuning"``.
        unit: What one step is (``"step"``, ``"img"``).
        initial: Steps already done (a resumed search).
        stream: Where lines go (standard error by default).
        interval: Seconds between lines (``PCEVOLVE_PROGRESS_SECONDS``, default 10).
        clock: Monotonic clock, for tests.
        heartbeat: Also print from a background thread when no update came for an interval.
        estimate: Show the time left, extrapolated from the steps done. Off for steps of very different lengths
            (the evaluation's: a few seconds of reading, then minutes of training), where it misleads.
        total_is_limit: ``total`` is a most, not a plan (a search that stops once it stops improving): the time
            left is shown as "up to".
    """

    def __init__(self, total: int | None, desc: str, unit: str = "it", *, initial: int = 0,
                 stream: IO[str] | None = None, interval: float | None = None,
                 clock: Callable[[], float] = time.monotonic, heartbeat: bool = True, estimate: bool = True,
                 total_is_limit: bool = False) -> None:
        self.total = total
        self.estimate = estimate
        self.total_is_limit = total_is_limit
        self.desc = desc
        self.unit = unit
        self.n = initial
        self._initial = initial
        self._stream = stream if stream is not None else sys.stderr
        self._interval = _interval() if interval is None else interval
        self._clock = clock
        self._started = clock()
        self._last = self._started
        self._postfix = ""
        self._closed = False
        self._lock = threading.Lock()
        # A step that updates rarely (a model trained for minutes between two updates) still reports: a
        # background heartbeat prints the status when no line was printed for an interval.
        self._stop = threading.Event()
        if heartbeat and self._interval > 0:
            threading.Thread(target=_heartbeat, args=(weakref.ref(self), self._stop, self._interval),
                             name=f"progress:{desc}", daemon=True).start()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def update(self, n: int = 1) -> None:
        self.n += n
        self._maybe_emit()

    def _maybe_emit(self) -> None:
        with self._lock:
            now = self._clock()
            if self._closed or now - self._last < self._interval:
                return
            self._last = now
            self._emit(self._status(now))


    def set_postfix(self, ordered_dict: Any = None, refresh: bool = True, **kwargs: Any) -> None:
        values = dict(ordered_dict or {}, **kwargs)
        self._postfix = ", ".join(f"{key}={value}" for key, value in values.items())

    def set_postfix_str(self, s: str = "", refresh: bool = True) -> None:
        self._postfix = s

    def close(self) -> None:
        with self._lock:
            if self._closed:
                return
            self._closed = True
        self._stop.set()
        if self.n == self._initial:  # nothing was done (the step failed at once): no "done" line
            return
        now = self._clock()
        self._emit(f"{self.desc}: {self.n}{'' if self.total is None else f'/{self.total}'} {self.unit} · "
                   f"done in {_duration(now - self._started)}" + (f" · {self._postfix}" if self._postfix else ""))

    def _status(self, now: float | None = None) -> str:
        elapsed = (now if now is not None else self._clock()) - self._started
        parts = [f"{self.desc}: {self.n}"]
        if self.total:
            parts[0] += f"/{self.total} {self.unit} ({self.n / self.total:.0%})"
        else:
            parts[0] += f" {self.unit}"
        parts.append(f"{_duration(elapsed)} elapsed")
        done = self.n - self._initial
        if self.estimate and self.total and 0 < done and self.n < self.total:
            left = _duration(elapsed / done * (self.total - self.n))
            parts.append(f"up to {left} left" if self.total_is_limit else f"about {left} left")
        if self._postfix:
            parts.append(self._postfix)
        return " · ".join(parts)

    def _emit(self, line: str) -> None:
        print(line, file=self._stream, flush=True)


def _heartbeat(bar: weakref.ref[LineProgress], stop: threading.Event, interval: float) -> None:
    # A weak reference: a bar dropped without close() (its step raised) ends its heartbeat when collected.
    while not stop.wait(interval):
        alive = bar()
        if alive is None:
            return
        alive._maybe_emit()
        del alive


class _Silent:
    """A reporter that reports nothing (``--quiet``, library calls with ``progress=False``)."""

    n = 0

    def update(self, n: int = 1) -> None:
        self.n += n

    def set_postfix(self, ordered_dict: Any = None, refresh: bool = True, **kwargs: Any) -> None:
        pass

    def set_postfix_str(self, s: str = "", refresh: bool = True) -> None:
        pass

    def close(self) -> None:
        pass


def progress_bar(total: int | None, desc: str, unit: str = "it", *, enabled: bool = True, initial: int = 0,
                 stream: IO[str] | None = None, estimate: bool = True, total_is_limit: bool = False) -> Progress:
    """A progress reporter for one step: a bar on a terminal, periodic lines otherwise, nothing if disabled.
    ``estimate=False`` leaves out the time left, ``total_is_limit`` shows it as "up to" (:class:`LineProgress`)."""
    if not enabled:
        return _Silent()
    target = stream if stream is not None else sys.stderr
    if getattr(target, "isatty", lambda: False)():
        layout = {} if estimate else {"bar_format": "{l_bar}{bar}| {n_fmt}/{total_fmt} [{elapsed}{postfix}]"}
        return tqdm(total=total, desc=desc, unit=unit, initial=initial, leave=False, file=target, **layout)
    return LineProgress(total, desc, unit, initial=initial, stream=target, estimate=estimate,
                        total_is_limit=total_is_limit)
