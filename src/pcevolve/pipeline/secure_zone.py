"""``runs/NAME/secure/``: what a run keeps that must never leave the secure zone, and the ledger it guards.

Everything here is computed from private data outside a DP mechanism, or is a secret:

* ``ledger.key`` — 32 random bytes that sign ``ledger.json`` (HMAC-SHA256). A resumed run
  refuses a ledger whose signature does not match, so a ledger rewritten to "forget" spent
  budget is detected. Whoever holds the whole run folder *except* ``secure/`` can still
  check the ledger's arithmetic (every ε is recomputed from its events), not forge it.
* ``private_fingerprint.json`` — exact per-class counts and a content hash of the private data
  (a resumed run must read the same data).
* ``diagnostics.jsonl`` — DP-SGD's loss and clipping rate on private batches.
* ``timings.json`` — wall-clock seconds of the stages that read private data: they grow with
  the private (Poisson) batch sizes and with n, which the DP analysis keeps secret.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pcevolve.io import append_jsonl, atomic_write_bytes, atomic_write_json, private_folder, read_json
from pcevolve.io.atomic import PRIVATE_FILE_MODE
from pcevolve.privacy import BudgetLedger
from pcevolve.privacy.ledger_errors import LedgerError
from pcevolve.privacy.ledger_file import new_ledger_key

if TYPE_CHECKING:
    from pcevolve.config import PrivacyConfig
    from pcevolve.data import LabeledDataset
    from pcevolve.run_folder import RunFolder

PRIVATE_DIAGNOSTICS = ("private_loss", "clipped_fraction")


class SecureZoneError(Exception):
    """The secure part of a run folder is missing or does not match; the message says what to do."""


class SecureZone:
    """The ``secure/`` folder of one run folder."""

    def __init__(self, folder: "RunFolder") -> None:
        self.folder = folder
        self.root = folder.secure_path

    @property
    def key_path(self) -> Path:
        return self.root / "ledger.key"

    def checkpoint_path(self, stage: str) -> Path:
        """Where a DP-SGD stage keeps its per-epoch checkpoint (``privacy/dpsgd_resume.py``) until it finishes."""
        return self.root / "checkpoints" / f"{stage}.pt"

    def read_key(self) -> bytes | None:
        """The ledger's signing key, or ``None`` when this copy of the run folder has no ``secure/ledger.key``.

        Raises:
            ValueError: The key file exists but is not the hex the run wrote.
        """
        if not self.key_path.is_file():
            return None
        return bytes.fromhex(self.key_path.read_text(encoding="ascii").strip())

    # ------------------------------------------------------------------ the ledger

    def write_key(self) -> bytes:
        """A new ledger signing key, written to ``secure/ledger.key`` (readable by its owner only)."""
        private_folder(self.root)
        key = new_ledger_key()
        atomic_write_bytes(self.key_path, key.hex().encode("ascii"))
        os.chmod(self.key_path, PRIVATE_FILE_MODE)
        return key

    def create_ledger(self, privacy: "PrivacyConfig", caps: dict[str, float]) -> BudgetLedger:
        """The run's signed, empty ledger with these stage caps, and its key; written before any charge."""
        key = self.write_key()
        return BudgetLedger(privacy.epsilon, privacy.delta, caps, path=self.folder.ledger_path,
                            neighbouring=privacy.neighbouring, reproducible_noise=privacy.reproducible_noise, key=key)

    def has_ledger(self) -> bool:
        """Whether this run has (or had) a ledger: then it must be found intact to continue.

        A run gets its ledger after reading its data and before its first charge, so a folder without a ledger,
        without a key and without any finished stage has spent nothing.
        """
        stages = self.folder.path / "stages"
        return (self.folder.ledger_path.exists() or self.key_path.exists()
                or (stages.is_dir() and any(stages.glob("*.json"))))

    def open_ledger(self, privacy: "PrivacyConfig") -> BudgetLedger:
        """The run's ledger, checked against its key and the config's privacy settings.

        Raises:
            SecureZoneError: The ledger or its key is missing or unreadable, its signature does not
                match, or its settings differ from the config: resuming would lose track of the
                budget already spent, so the run refuses.
        """
        path = self.folder.ledger_path
        restart = "Start a new run (another `name:`); the budget this run spent stays spent."
        if not path.exists():
            raise SecureZoneError(f"{path} is missing, so the privacy budget this run already spent is unknown; "
                                  f"refusing to resume. {restart}")
        try:
            key = self.read_key()
        except (OSError, ValueError):
            key = None
        if key is None:
            raise SecureZoneError(f"{self.key_path} is missing or damaged, so {path} cannot be verified; refusing "
                                  f"to resume. {restart}") from None
        try:
            ledger = BudgetLedger.load(path, key=key)
        except (LedgerError, ValueError) as error:
            raise SecureZoneError(f"cannot resume with {path}: {error}. {restart}") from None
        # The caps were calibrated when the ledger was made (they depend on n); the rest must match the config.
        wanted = {"total ε": privacy.epsilon, "δ": privacy.delta, "neighbouring relation": privacy.neighbouring,
                  "reproducible noise": privacy.reproducible_noise, "stages": sorted(privacy.split)}
        found = {"total ε": ledger.total_epsilon, "δ": ledger.delta, "neighbouring relation": ledger.neighbouring,
                 "reproducible noise": ledger.reproducible_noise, "stages": sorted(ledger.stages)}
        differ = [name for name in wanted if wanted[name] != found[name]]
        if differ:
            raise SecureZoneError(f"cannot resume with {path}: it was made for other privacy settings "
                                  f"({', '.join(differ)}). {restart}")
        return ledger

    # ------------------------------------------------------------------ private facts

    def check_private_unchanged(self, private: "LabeledDataset", source: str) -> None:
        """Store the private data's fingerprint on the first call; later calls refuse changed data."""
        path = self.root / "private_fingerprint.json"
        fingerprint = private.fingerprint()
        if path.exists():
            if read_json(path) != fingerprint:
                raise SecureZoneError(f"the private data at {source} changed since this run started; a resumed "
                                      "run must read the same private data")
            return
        private_folder(self.root)
        atomic_write_json(path, fingerprint)

    def record_diagnostics(self, entry: dict[str, Any]) -> None:
        """Append one record of private training diagnostics (not DP), in a file only its owner can read."""
        path = private_folder(self.root) / "diagnostics.jsonl"
        append_jsonl(path, entry)
        os.chmod(path, PRIVATE_FILE_MODE)

    def add_timings(self, seconds: dict[str, float]) -> None:
        """Merge wall-clock seconds of private stages into ``timings.json``."""
        path = self.root / "timings.json"
        known = read_json(path) if path.exists() else {}
        atomic_write_json(path, {**known, **seconds})


def split_training_record(entry: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any] | None]:
    """A training record's shareable fields, and the whole record when it holds private diagnostics."""
    public = {k: v for k, v in entry.items() if k not in PRIVATE_DIAGNOSTICS}
    private = entry if any(k in entry for k in PRIVATE_DIAGNOSTICS) else None
    return public, private
