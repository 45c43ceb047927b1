"""The ledger's file: one JSON document, written atomically, hashed, optionally signed, verified on reload.

Rules that must never change:

* The document is the ledger's settings, its entries and a summary, with an ``integrity`` field: SHA-256 of the
  canonical JSON of everything else (sorted keys, no spaces, no NaN). The hash catches damage and naive edits;
  anyone can recompute it. With the run's secret key (``secure/ledger.key``, :func:`new_ledger_key`) the document
  also carries a ``signature``: HMAC-SHA256 of the same bytes, which only the key's holder can produce.
* Every write goes through ``io.atomic_write_json`` (temporary file, fsync, rename): a reader sees the old file or
  the new one, never half of one. :class:`~pcevolve.privacy.ledger.BudgetLedger` writes after every accepted charge
  and before the charge returns, and only then records it, so a failed write leaves the ledger as it was.
* :meth:`LedgerFile.load` trusts no stored number. It refuses (:class:`LedgerCorrupt`) an unreadable file, one of
  another format or version, a wrong hash, a signature that does not match the key it was given, or malformed
  settings; then it replays every entry through the ledger's own admission checks, so the ε of each entry is
  recomputed by the accountant and every cap is checked again, and refuses a file whose stored ε differ or whose
  events overspend.
* A signed ledger loaded without its key can be read but not charged: a write would drop the signature.
* :meth:`LedgerFile.open` resumes an existing file only if its settings are the run's (a run's budget cannot change
  between restarts); it creates the file only where none exists. A ledger never silently replaces a file.
* A ledger for reproducible noise says "NOT DP" in its file (``dp`` flag and notice).
"""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
import math
import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pcevolve.io import atomic_write_json, read_json
from pcevolve.privacy.accounting import pld_discretization_for
from pcevolve.privacy.events import Neighbouring, event_from_json
from pcevolve.privacy.ledger_entry import LedgerEntry, _finite_or_none
from pcevolve.privacy.ledger_errors import BudgetExceeded, LedgerCorrupt, LedgerError

if TYPE_CHECKING:
    from pcevolve.privacy.ledger import BudgetLedger

# One log for the whole ledger: its reloads are logged under the same name as its charges.
logger = logging.getLogger("pcevolve.privacy.ledger")

LEDGER_FORMAT = "pcevolve.privacy.ledger"
LEDGER_VERSION = 2  # 2: the noise source is part of the settings; an optional keyed signature
_TOLERANCE = 1e-9  # recomputed ε must match the stored ε to this relative precision

NOT_DP_NOTICE = ("NOT DP: the mechanisms' noise was derived from a seed that ships with the run, so anyone holding "
                 "the run's config can regenerate it and remove it")


class LedgerFile:
    """The file half of :class:`~pcevolve.privacy.ledger.BudgetLedger`, which inherits it: resume, reload, save.

    It keeps no state of its own: it reads and writes the ledger's attributes and replays entries through the
    ledger's own admission check (``_admit``), so a reloaded ledger is checked exactly as its charges were.
    """

    # ----------------------------------------------------------------- resuming

    @classmethod
    def open(
        cls,
        path: str | os.PathLike[str],
        total_epsilon: float,
        delta: float,
        stages: Mapping[str, float],
        *,
        neighbouring: Neighbouring = "add_remove",
        reproducible_noise: bool = False,
        key: bytes | None = None,
        pld_discretization: float | None = None,
    ) -> "BudgetLedger":
        """Resume the ledger at ``path`` if it exists, else create it there.

        Raises:
            LedgerError: the existing ledger has a different budget, stages, δ, relation or
                noise source (a run's budget cannot change between restarts).
            LedgerCorrupt: see :meth:`load` (with ``key``, also a missing or wrong signature).
        """
        if pld_discretization is None:
            pld_discretization = pld_discretization_for(total_epsilon)
        if not Path(path).exists():
            return cls(total_epsilon, delta, stages, path=path, neighbouring=neighbouring,
                       reproducible_noise=reproducible_noise, key=key, pld_discretization=pld_discretization)
        ledger = cls.load(path, key=key)
        wanted = {"total_epsilon": float(total_epsilon), "delta": float(delta),
                  "stages": {k: float(v) for k, v in stages.items()}, "neighbouring": neighbouring,
                  "noise": "reproducible" if reproducible_noise else "secure",
                  "pld_discretization": float(pld_discretization)}
        found = ledger._settings()
        if found != wanted:
            diff = sorted(key for key in wanted if wanted[key] != found[key])
            raise LedgerError(f"{path}: the existing ledger differs from the run's privacy settings in {diff}: "
                              f"ledger {[found[k] for k in diff]}, run {[wanted[k] for k in diff]}")
        return ledger

    @classmethod
    def load(cls, path: str | os.PathLike[str], *, key: bytes | None = None,
             clock: Callable[[], str] | None = None) -> "BudgetLedger":
        """Reload a ledger file, recomputing every ε from its events.

        Args:
            key: The run's secret ledger key. Given, the file's signature must match it, so a
                ledger rewritten by someone without the key is refused; the key is kept for
                the signatures of later charges.

        Raises:
            FileNotFoundError: no file at ``path``.
            LedgerCorrupt: the file is not valid JSON, not a ledger, edited, its signature
                does not match ``key``, or its events do not give the ε it records or
                overspend a cap.
        """
        source = Path(path)
        if not source.exists():
            raise FileNotFoundError(f"no ledger at {source}")
        try:
            document = read_json(source)
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise LedgerCorrupt(f"{source}: not a readable JSON ledger ({exc})") from None
        if not isinstance(document, dict) or document.get("format") != LEDGER_FORMAT:
            raise LedgerCorrupt(f"{source}: not a pcevolve privacy ledger (format field missing or wrong)")
        if document.get("version") != LEDGER_VERSION:
            raise LedgerCorrupt(f"{source}: unsupported ledger version {document.get('version')!r} (this pcevolve "
                                f"reads version {LEDGER_VERSION}; version 1 did not record where its noise came from)")
        stored_hash = document.get("integrity")
        body = {name: value for name, value in document.items() if name not in ("integrity", "signature")}
        if stored_hash != _digest(body):
            raise LedgerCorrupt(f"{source}: integrity hash does not match the content; the file was edited or "
                                "damaged")
        if key is not None and not hmac.compare_digest(str(document.get("signature", "")), _signature(body, key)):
            raise LedgerCorrupt(f"{source}: the signature does not match this run's ledger key (secure/ledger.key); "
                                "the ledger was rewritten or replaced, so the budget it shows cannot be trusted")
        try:
            settings = body["settings"]
            stages = {item["name"]: item["cap"] for item in settings["stages"]}
            if len(stages) != len(settings["stages"]):
                raise ValueError("duplicate stage names")
            if settings["noise"] not in ("secure", "reproducible"):
                raise ValueError(f"noise must be 'secure' or 'reproducible', got {settings['noise']!r}")
            ledger = cls(settings["total_epsilon"], settings["delta"], stages,
                         neighbouring=settings["neighbouring"], reproducible_noise=settings["noise"] == "reproducible",
                         key=key, pld_discretization=settings["pld_discretization"], clock=clock)
            raw_entries = body["entries"]
            if not isinstance(raw_entries, list):
                raise TypeError("entries must be a list")
        except (KeyError, TypeError, ValueError) as exc:
            raise LedgerCorrupt(f"{source}: bad ledger settings: {exc}") from None
        for position, raw in enumerate(raw_entries):
            ledger._replay(source, position, raw)
        ledger._path = source
        # A signed ledger loaded without its key can be read but not charged: a write would drop the signature.
        ledger._unsigned_copy_of_signed = key is None and "signature" in document
        logger.info("resumed ledger %s: %d entries, total ε %.4g", source, len(ledger._entries), ledger.spent())
        return ledger

    def _replay(self, source: Path, position: int, raw: Any) -> None:
        where = f"{source}: entry {position}"
        try:
            if not isinstance(raw, dict):
                raise TypeError("an entry must be a JSON object")
            event = event_from_json(raw["event"])
            if raw["mechanism"] != event.kind or raw["index"] != position:
                raise ValueError("mechanism or index does not match the event")
            stage, time, description = raw["stage"], raw["time"], raw["description"]
            if not all(isinstance(v, str) for v in (stage, time, description)):
                raise TypeError("stage, time and description must be strings")
            stored_stage, stored_total = float(raw["stage_epsilon"]), float(raw["total_epsilon"])
        except (KeyError, TypeError, ValueError) as exc:
            raise LedgerCorrupt(f"{where} is malformed: {exc}") from None
        try:
            entry = self._admit(stage, event, description=description, time=time)
        except BudgetExceeded as exc:
            raise LedgerCorrupt(f"{where} overspends: {exc}") from None
        except LedgerError as exc:
            raise LedgerCorrupt(f"{where}: {exc}") from None
        for name, stored, recomputed in (("stage ε", stored_stage, entry.stage_epsilon),
                                         ("total ε", stored_total, entry.total_epsilon)):
            if not math.isclose(stored, recomputed, rel_tol=_TOLERANCE, abs_tol=1e-12):
                raise LedgerCorrupt(f"{where} records {name} {stored!r} but its events give {recomputed!r}; "
                                    "the file was edited or written by a different accountant")
        self._entries = (*self._entries, entry)

    # ----------------------------------------------------------------- persistence

    def _settings(self) -> dict[str, Any]:
        return {"total_epsilon": self._total, "delta": self._delta, "stages": dict(self._stages),
                "neighbouring": self._neighbouring, "noise": "reproducible" if self._reproducible else "secure",
                "pld_discretization": self._discretization}

    def _settings_json(self) -> dict[str, Any]:
        # Stages as a list keeps their pipeline order (JSON objects are written with sorted keys).
        settings = self._settings()
        settings["stages"] = [{"name": name, "cap": cap} for name, cap in self._stages.items()]
        return settings

    def to_json(self, entries: tuple[LedgerEntry, ...] | None = None) -> dict[str, Any]:
        """The ledger as a JSON document (what :meth:`save` writes)."""
        entries = self._entries if entries is None else entries
        events = [e.event for e in entries]
        stages = []
        for name, cap in self._stages.items():
            result = self._account([e.event for e in entries if e.stage == name])
            stages.append({"name": name, "cap": cap, "epsilon": result.epsilon, "bound": result.bound})
        total = self._account(events)
        body = {
            "format": LEDGER_FORMAT,
            "version": LEDGER_VERSION,
            "dp": self.is_dp,
            "notice": NOT_DP_NOTICE if self._reproducible else "mechanism noise drawn from the operating system's "
                      "secure random source",
            "settings": self._settings_json(),
            "accountant": {"library": "dp-accounting", "version": _dp_accounting_version(),
                           "reported": "min(PLD + basic composition of pure-DP events, RDP)"},
            "entries": [e.to_json() for e in entries],
            "summary": {"total": {"cap": self._total, "epsilon": total.epsilon, "bound": total.bound,
                                  "pld_epsilon": _finite_or_none(total.pld_bound),
                                  "rdp_epsilon": _finite_or_none(total.rdp_epsilon)},
                        "stages": stages},
        }
        document = {**body, "integrity": _digest(body)}
        if self._key is not None:
            document["signature"] = _signature(body, self._key)
        return document

    def save(self, path: str | os.PathLike[str] | None = None) -> Path:
        """Write the ledger atomically to ``path`` (default: its own path)."""
        target = Path(path) if path is not None else self._path
        if target is None:
            raise LedgerError("this ledger has no path; pass one to save()")
        return self._write(target, self._entries)

    def _write(self, target: Path, entries: tuple[LedgerEntry, ...]) -> Path:
        return atomic_write_json(target, self.to_json(entries))


def _canonical(body: Mapping[str, Any]) -> bytes:
    return json.dumps(body, sort_keys=True, separators=(",", ":"), allow_nan=False).encode("utf-8")


def _digest(body: Mapping[str, Any]) -> str:
    # Detects accidental damage and naive edits; it is not a signature (anyone can recompute it).
    return "sha256:" + hashlib.sha256(_canonical(body)).hexdigest()


def _signature(body: Mapping[str, Any], key: bytes) -> str:
    # Keyed: only whoever holds the run's secret key (secure/ledger.key) can produce it.
    return "hmac-sha256:" + hmac.new(key, _canonical(body), hashlib.sha256).hexdigest()


def new_ledger_key() -> bytes:
    """32 secret bytes from the operating system for :class:`BudgetLedger`'s ``key``."""
    return os.urandom(32)


def _dp_accounting_version() -> str:
    import importlib.metadata

    try:
        return importlib.metadata.version("dp-accounting")
    except importlib.metadata.PackageNotFoundError:  # pragma: no cover
        return "unknown"
