"""The ledger's file format: one JSON document, written atomically, hashed, optionally signed, verified on reload.

The functions here know the document, not the ledger: :class:`~pcevolve.privacy.ledger.BudgetLedger` hands them its
settings and entries to write, and takes back verified settings and raw entries to replay.

Rules that must never change:

* The document is the ledger's settings, its entries and a summary, with an ``integrity`` field: SHA-256 of the
  canonical JSON of everything else (sorted keys, no spaces, no NaN). The hash catches damage and naive edits;
  anyone can recompute it. With the run's secret key (``secure/ledger.key``, :func:`new_ledger_key`) the document
  also carries a ``signature``: HMAC-SHA256 of the same bytes, which only the key's holder can produce.
* Every write goes through ``io.atomic_write_json`` (temporary file, fsync, rename): a reader sees the old file or
  the new one, never half of one. :class:`~pcevolve.privacy.ledger.BudgetLedger` writes after every accepted charge
  and before the charge returns, and only then records it, so a failed write leaves the ledger as it was.
* :func:`read_ledger_document` trusts no stored number. It refuses (:class:`LedgerCorrupt`) an unreadable file, one
  of another format or version, a wrong hash, a signature that does not match the key it was given, or malformed
  settings; :meth:`~pcevolve.privacy.ledger.BudgetLedger.load` then replays every entry (:func:`parse_entry`)
  through the ledger's own admission checks, so the ε of each entry is recomputed by the accountant and every cap
  is checked again, and refuses a file whose stored ε differ (:func:`check_recorded`) or whose events overspend.
* A signed ledger loaded without its key can be read but not charged: a write would drop the signature.
* :meth:`~pcevolve.privacy.ledger.BudgetLedger.open` resumes an existing file only if its settings are the run's (a
  run's budget cannot change between restarts); it creates the file only where none exists. A ledger never
  silently replaces a file.
* A ledger for reproducible noise says "NOT DP" in its file (``dp`` flag and notice).
"""

from __future__ import annotations

import hashlib
import hmac
import json
import math
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pcevolve.io import atomic_write_json, read_json
from pcevolve.privacy.events import PrivacyEvent, event_from_json
from pcevolve.privacy.ledger_entry import LedgerEntry
from pcevolve.privacy.ledger_errors import LedgerCorrupt

LEDGER_FORMAT = "pcevolve.privacy.ledger"
LEDGER_VERSION = 2  # 2: the noise source is part of the settings; an optional keyed signature
_TOLERANCE = 1e-9  # recomputed ε must match the stored ε to this relative precision

NOT_DP_NOTICE = ("NOT DP: the mechanisms' noise was derived from a seed that ships with the run, so anyone holding "
                 "the run's config can regenerate it and remove it")
SECURE_NOTICE = "mechanism noise drawn from the operating system's secure random source"


@dataclass(frozen=True)
class LedgerSettings:
    """A ledger's budget as its file states it (the arguments of a new ledger)."""

    total_epsilon: float
    delta: float
    stages: dict[str, float]
    neighbouring: str
    reproducible_noise: bool
    pld_discretization: float

    def comparable(self) -> dict[str, Any]:
        """The settings as plain values, to compare a file's with a run's."""
        return {"total_epsilon": float(self.total_epsilon), "delta": float(self.delta),
                "stages": {name: float(cap) for name, cap in self.stages.items()},
                "neighbouring": self.neighbouring, "noise": "reproducible" if self.reproducible_noise else "secure",
                "pld_discretization": float(self.pld_discretization)}

    def to_json(self) -> dict[str, Any]:
        # Stages as a list keeps their pipeline order (JSON objects are written with sorted keys).
        settings = self.comparable()
        settings["stages"] = [{"name": name, "cap": cap} for name, cap in self.stages.items()]
        return settings


@dataclass(frozen=True)
class LedgerDocument:
    """A verified ledger file: its settings, its entries as stored (to be replayed, not trusted) and whether it was
    signed."""

    settings: LedgerSettings
    entries: list[Any]
    signed: bool


def ledger_document(settings: LedgerSettings, entries: tuple[LedgerEntry, ...], summary: Mapping[str, Any], *,
                    key: bytes | None) -> dict[str, Any]:
    """The JSON document of a ledger: its settings, entries and ``summary``, with the integrity hash and, given the
    run's ``key``, the signature."""
    reproducible = settings.reproducible_noise
    body = {
        "format": LEDGER_FORMAT,
        "version": LEDGER_VERSION,
        "dp": not reproducible,
        "notice": NOT_DP_NOTICE if reproducible else SECURE_NOTICE,
        "settings": settings.to_json(),
        "accountant": {"library": "dp-accounting", "version": _dp_accounting_version(),
                       "reported": "min(PLD + basic composition of pure-DP events, RDP)"},
        "entries": [e.to_json() for e in entries],
        "summary": dict(summary),
    }
    document = {**body, "integrity": _digest(body)}
    if key is not None:
        document["signature"] = _signature(body, key)
    return document


def write_ledger_document(path: Path, document: Mapping[str, Any]) -> Path:
    """Write ``document`` to ``path`` atomically (the old file or the new one, never half of one)."""
    return atomic_write_json(path, document)


def read_ledger_document(path: str | os.PathLike[str], *, key: bytes | None = None) -> LedgerDocument:
    """Read and verify a ledger file: format, version, integrity hash, the signature when ``key`` is given, and
    well-formed settings.

    Raises:
        FileNotFoundError: no file at ``path``.
        LedgerCorrupt: the file is not valid JSON, not a ledger, edited, its signature does not match ``key``, or
            its settings are malformed.
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
        parsed = LedgerSettings(settings["total_epsilon"], settings["delta"], stages, settings["neighbouring"],
                                settings["noise"] == "reproducible", settings["pld_discretization"])
        raw_entries = body["entries"]
        if not isinstance(raw_entries, list):
            raise TypeError("entries must be a list")
    except (KeyError, TypeError, ValueError) as exc:
        raise LedgerCorrupt(f"{source}: bad ledger settings: {exc}") from None
    return LedgerDocument(parsed, raw_entries, "signature" in document)


@dataclass(frozen=True)
class StoredEntry:
    """One entry as a file stores it: what the ledger replays, and the ε it claims (checked, never trusted)."""

    stage: str
    event: PrivacyEvent
    description: str
    time: str
    stage_epsilon: float
    total_epsilon: float


def parse_entry(where: str, position: int, raw: Any) -> StoredEntry:
    """The stored entry at ``position``, checked for form only.

    Raises:
        LedgerCorrupt: it is malformed (``where`` names it).
    """
    try:
        if not isinstance(raw, dict):
            raise TypeError("an entry must be a JSON object")
        event = event_from_json(raw["event"])
        if raw["mechanism"] != event.kind or raw["index"] != position:
            raise ValueError("mechanism or index does not match the event")
        stage, time, description = raw["stage"], raw["time"], raw["description"]
        if not all(isinstance(v, str) for v in (stage, time, description)):
            raise TypeError("stage, time and description must be strings")
        return StoredEntry(stage, event, description, time, float(raw["stage_epsilon"]), float(raw["total_epsilon"]))
    except (KeyError, TypeError, ValueError) as exc:
        raise LedgerCorrupt(f"{where} is malformed: {exc}") from None


def check_recorded(where: str, stored: StoredEntry, replayed: LedgerEntry) -> None:
    """Refuse a stored entry whose recorded ε differ from what its replay computed.

    Raises:
        LedgerCorrupt: they differ beyond rounding (``where`` names the entry).
    """
    for name, recorded, recomputed in (("stage ε", stored.stage_epsilon, replayed.stage_epsilon),
                                       ("total ε", stored.total_epsilon, replayed.total_epsilon)):
        if not math.isclose(recorded, recomputed, rel_tol=_TOLERANCE, abs_tol=1e-12):
            raise LedgerCorrupt(f"{where} records {name} {recorded!r} but its events give {recomputed!r}; "
                                "the file was edited or written by a different accountant")


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
