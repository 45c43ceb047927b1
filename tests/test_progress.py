"""Progress reports: periodic lines with share, time and estimate when the output is not a terminal."""

from __future__ import annotations

import io

import pytest

from pcevolve.progress import LineProgress, progress_bar


class _Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_lines_every_interval_with_share_and_estimate() -> None:
    stream, clock = io.StringIO(), _Clock()
    bar = LineProgress(100, "DP fine-tuning", "step", stream=stream, interval=10.0, clock=clock, heartbeat=False)
    for _ in range(25):
        clock.now += 1.0
        bar.update(1)
    bar.set_postfix(loss="0.5")
    clock.now += 1.0
    bar.update(5)
    bar.close()
    bar.close()  # a second close prints nothing
    lines = stream.getvalue().splitlines()
    assert lines[0] == "DP fine-tuning: 10/100 step (10%) · 0:10 elapsed · about 1:30 left"
    assert lines[1] == "DP fine-tuning: 20/100 step (20%) · 0:20 elapsed · about 1:20 left"
    assert lines[2] == "DP fine-tuning: 30/100 step · done in 0:26 · loss=0.5"  # 6 s after the last: no line
    assert len(lines) == 3


def test_a_resumed_step_estimates_from_its_own_pace() -> None:
    stream, clock = io.StringIO(), _Clock()
    bar = LineProgress(120, "search", "gen", initial=60, stream=stream, interval=5.0, clock=clock,
                       heartbeat=False)
    clock.now = 10.0
    bar.update(10)  # 10 generations in 10 s, 50 left
    assert stream.getvalue().splitlines()[0] == "search: 70/120 gen (58%) · 0:10 elapsed · about 0:50 left"


@pytest.mark.parametrize("total, desc, unit, option, line", [
    # The evaluation's steps last from seconds to minutes: extrapolating from them promised minutes that never came.
    (9, "evaluate", "step", {"estimate": False}, "evaluate: 3/9 step (33%) · 0:10 elapsed"),
    # A search stops once it stops improving, often long before its most generations.
    (120, "search", "gen", {"total_is_limit": True}, "search: 3/120 gen (2%) · 0:10 elapsed · up to 6:30 left"),
])
def test_the_time_left_is_left_out_or_an_upper_bound_when_asked(total, desc, unit, option, line) -> None:
    stream, clock = io.StringIO(), _Clock()
    bar = LineProgress(total, desc, unit, stream=stream, interval=5.0, clock=clock, heartbeat=False, **option)
    clock.now = 10.0
    bar.update(3)
    assert stream.getvalue().splitlines() == [line]


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_a_terminal_bar_without_estimate_shows_no_time_left() -> None:
    stream = _Terminal()
    bar = progress_bar(9, "evaluate", "step", stream=stream, estimate=False)
    bar.update(3)
    bar.refresh()
    assert "3/9" in stream.getvalue() and "<" not in stream.getvalue()  # tqdm writes the time left after a "<"
    bar.close()


def test_not_a_terminal_gives_lines_disabled_gives_nothing() -> None:
    stream = io.StringIO()
    bar = progress_bar(3, "encoding", "img", stream=stream)
    assert isinstance(bar, LineProgress)
    bar.update(3)
    bar.close()
    assert stream.getvalue() == "encoding: 3/3 img · done in 0:00\n"
    silent = io.StringIO()
    quiet = progress_bar(3, "encoding", "img", enabled=False, stream=silent)
    quiet.update(3)
    quiet.close()
    assert silent.getvalue() == ""


def test_a_slow_step_still_reports_between_updates() -> None:
    import time

    stream = io.StringIO()
    bar = LineProgress(2, "CNNs", "step", stream=stream, interval=0.05)
    time.sleep(0.3)  # no update: the heartbeat prints the status anyway
    bar.close()
    lines = stream.getvalue().splitlines()
    assert len(lines) >= 2 and lines[0].startswith("CNNs: 0/2 step (0%)")
    count = len(lines)
    time.sleep(0.15)
    assert len(stream.getvalue().splitlines()) == count  # nothing after close
