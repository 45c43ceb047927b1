"""The budget ledger: one total (ε, δ), per-stage caps, a full history, refusal before any noise.

Rules that must never change:

* :meth:`BudgetLedger.charge` decides before anything is released. A refused
  charge raises :class:`BudgetExceeded` and changes nothing: not the history,
  not the file. Mechanisms call it before drawing noise.
* Every ε the ledger reports comes from ``accounting.account`` over the stored
  events, recomputed from scratch; stored numbers are never trusted. A reloaded
  ledger replays its events, checks every stored number and every cap, and
  refuses a file that does not add up (:class:`LedgerCorrupt`).
* δ: every ε is computed at the ledger's one δ. The guarantee of a run is the
  accountant's ε over **all** events at that δ, and a charge is refused when it
  would exceed the total ε. Stage caps are allocations on top: a charge is also
  refused when the accountant's ε over that stage's events alone, at the same δ,
  would exceed the stage's cap. A stage with cap 0 accepts only post-processing.
* With a path, the ledger is written atomically after every accepted charge and
  before the charge returns, so a restart resumes from it and cannot spend twice.
  A ledger never silently replaces an existing file.
* The ledger states where the mechanisms' noise came from. A ledger for secure noise
  refuses a charge whose mechanism draws from a non-secure (seeded) source, so it can
  never claim DP for noise that can be regenerated; a ledger for reproducible noise
  says "not DP" in its file and everywhere it is shown.
* Time stamps are dates, not times: the times of consecutive DP-SGD charges would give
  away how long each private epoch took, which grows with the private batch sizes.
* A ledger may be bound to a parent ledger (:meth:`BudgetLedger.bind`: a sweep's, which composes several runs on
  the same private data). Every later charge is then admitted by both, the parent's written first: a refusal by
  either changes neither, and a crash between the two writes leaves the parent counting one event more than the
  child, never less.

The history's entries are in ``ledger_entry``, the refusals in ``ledger_errors``, and the file's format — its
document, integrity hash, keyed signature, atomic write and verified read — in ``ledger_file``; the ledger saves,
loads and resumes itself through those functions, replaying every stored entry through its own admission check.
"""

from __future__ import annotations

import datetime as _dt
import logging
import math
import os
from collections.abc import Callable, Mapping
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING

from pcevolve.privacy.accounting import MAX_PLD_DISCRETIZATION, PrivacyAccount, account, pld_discretization_for
from pcevolve.privacy.events import Neighbouring, PostProcessing, PrivacyEvent, check_neighbouring
from pcevolve.privacy.ledger_entry import LedgerEntry, _finite_or_none
from pcevolve.privacy.ledger_errors import BudgetExceeded, LedgerCorrupt, LedgerError
from pcevolve.privacy.ledger_file import (
    LedgerSettings,
    check_recorded,
    ledger_document,
    parse_entry,
    read_ledger_document,
    write_ledger_document,
)
from pcevolve.privacy.noise import check_positive

if TYPE_CHECKING:
    from pcevolve.config import PrivacyConfig
    from pcevolve.privacy.noise import NoiseSource

logger = logging.getLogger(__name__)


def _utc_today() -> str:
    # A date only (see the module docstring: charge times would reveal private epoch durations).
    return _dt.datetime.now(_dt.timezone.utc).date().isoformat()


class BudgetLedger:
    """Tracks every privacy-relevant release of a run against one total budget and per-stage caps.

    Args:
        total_epsilon: The run's total ε.
        delta: The run's δ; every ε is computed at it.
        stages: Stage name → ε cap, each non-negative and at most ``total_epsilon``. They may sum to more: the
            accountant composes stages sub-additively, and every charge is also checked against the total.
        path: Where to keep the ledger file. It must not exist yet (use :meth:`load` or
            :meth:`open` to resume); it is written at once and after every charge.
        neighbouring: The neighbouring relation all sensitivities refer to.
        reproducible_noise: The mechanisms draw seeded, reproducible noise (tests and research;
            the ledger then says the run is not DP). Default ``False``: only mechanisms whose
            noise source is secure may charge this ledger.
        key: Secret bytes (kept in the run's ``secure/`` folder) with which the file is signed
            (HMAC-SHA256), so a rewritten ledger is detected by whoever holds the key.
        pld_discretization: PLD discretisation interval (pessimistic); default
            :func:`~pcevolve.privacy.accounting.pld_discretization_for` the total.
        clock: Returns the time stamp of a charge (for tests); the UTC date by default.
    """

    def __init__(
        self,
        total_epsilon: float,
        delta: float,
        stages: Mapping[str, float],
        *,
        path: str | os.PathLike[str] | None = None,
        neighbouring: Neighbouring = "add_remove",
        reproducible_noise: bool = False,
        key: bytes | None = None,
        pld_discretization: float | None = None,
        clock: Callable[[], str] | None = None,
    ) -> None:
        total = check_positive("total_epsilon", total_epsilon)
        if not (0.0 < float(delta) < 1.0):
            raise ValueError(f"delta must be in (0, 1), got {delta!r}")
        if not stages:
            raise ValueError("a ledger needs at least one stage")
        caps: dict[str, float] = {}
        for name, cap in stages.items():
            if not isinstance(name, str) or not name:
                raise ValueError(f"stage names must be non-empty strings, got {name!r}")
            value = float(cap)
            if not (math.isfinite(value) and value >= 0):
                raise ValueError(f"stage {name!r} cap must be non-negative and finite, got {cap!r}")
            caps[name] = value
        # Caps may sum to more than the total: composition is sub-additive, so a run's caps are scaled until the
        # accountant's total over all stages is the total ε. The total is the guarantee; a cap above it never is.
        for name, value in caps.items():
            if value > total * (1 + 1e-12):
                raise ValueError(f"stage {name!r} cap {value:g} exceeds the total ε {total:g}")
        if pld_discretization is None:
            pld_discretization = pld_discretization_for(total)
        if not (0.0 < pld_discretization <= MAX_PLD_DISCRETIZATION):
            raise ValueError(f"pld_discretization must be in (0, 0.1], got {pld_discretization!r}")
        self._total = total
        self._delta = float(delta)
        self._stages = MappingProxyType(caps)
        self._neighbouring = check_neighbouring(neighbouring)
        if not isinstance(reproducible_noise, bool):
            raise TypeError(f"reproducible_noise must be a bool, got {reproducible_noise!r}")
        self._reproducible = reproducible_noise
        if key is not None and (not isinstance(key, bytes) or len(key) < 16):
            raise ValueError("a ledger key must be at least 16 bytes")
        self._key = key
        self._discretization = float(pld_discretization)
        self._clock = clock or _utc_today
        self._entries: tuple[LedgerEntry, ...] = ()
        self._path: Path | None = None
        self._unsigned_copy_of_signed = False
        self._parent: tuple[BudgetLedger, str] | None = None
        if path is not None:
            target = Path(path)
            if target.exists():
                raise FileExistsError(f"a ledger already exists at {target}; resume it with BudgetLedger.load/open")
            self._write(target, self._entries)
            self._path = target

    # ----------------------------------------------------------------- construction

    @classmethod
    def from_config(cls, privacy: "PrivacyConfig", *, caps: Mapping[str, float] | None = None,
                    path: str | os.PathLike[str] | None = None) -> "BudgetLedger":
        """A new ledger with the budget of a :class:`~pcevolve.config.PrivacyConfig`.

        Args:
            caps: Stage caps; default the shares of ``privacy.split`` times the total ε (caps summing to ε,
                which composition spends only in part: a run scales them, see ``pcevolve.pipeline.plan``).
        """
        stages = dict(caps) if caps is not None else {k: v * privacy.epsilon for k, v in privacy.split.items()}
        return cls(privacy.epsilon, privacy.delta, stages, path=path,
                   neighbouring=privacy.neighbouring, reproducible_noise=privacy.reproducible_noise)

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
        wanted = LedgerSettings(total_epsilon, delta, dict(stages), neighbouring, reproducible_noise,
                                pld_discretization).comparable()
        found = ledger._file_settings().comparable()
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
        document = read_ledger_document(source, key=key)
        settings = document.settings
        try:
            ledger = cls(settings.total_epsilon, settings.delta, settings.stages,
                         neighbouring=settings.neighbouring,  # type: ignore[arg-type]
                         reproducible_noise=settings.reproducible_noise, key=key,
                         pld_discretization=settings.pld_discretization, clock=clock)
        except (KeyError, TypeError, ValueError) as exc:
            raise LedgerCorrupt(f"{source}: bad ledger settings: {exc}") from None
        for position, raw in enumerate(document.entries):
            ledger._replay(f"{source}: entry {position}", position, raw)
        ledger._path = source
        # A signed ledger loaded without its key can be read but not charged: a write would drop the signature.
        ledger._unsigned_copy_of_signed = key is None and document.signed
        logger.info("resumed ledger %s: %d entries, total ε %.4g", source, len(ledger._entries), ledger.spent())
        return ledger

    def _replay(self, where: str, position: int, raw: object) -> None:
        stored = parse_entry(where, position, raw)
        try:
            entry = self._admit(stored.stage, stored.event, description=stored.description, time=stored.time)
        except BudgetExceeded as exc:
            raise LedgerCorrupt(f"{where} overspends: {exc}") from None
        except LedgerError as exc:
            raise LedgerCorrupt(f"{where}: {exc}") from None
        check_recorded(where, stored, entry)
        self._entries = (*self._entries, entry)

    # ----------------------------------------------------------------- the file

    def _file_settings(self) -> LedgerSettings:
        return LedgerSettings(self._total, self._delta, dict(self._stages), self._neighbouring, self._reproducible,
                              self._discretization)

    def to_json(self, entries: tuple[LedgerEntry, ...] | None = None) -> dict[str, object]:
        """The ledger as a JSON document (what :meth:`save` writes)."""
        entries = self._entries if entries is None else entries
        stages = []
        for name, cap in self._stages.items():
            result = self._account([e.event for e in entries if e.stage == name])
            stages.append({"name": name, "cap": cap, "epsilon": result.epsilon, "bound": result.bound})
        total = self._account([e.event for e in entries])
        summary = {"total": {"cap": self._total, "epsilon": total.epsilon, "bound": total.bound,
                             "pld_epsilon": _finite_or_none(total.pld_bound),
                             "rdp_epsilon": _finite_or_none(total.rdp_epsilon)},
                   "stages": stages}
        return ledger_document(self._file_settings(), entries, summary, key=self._key)

    def save(self, path: str | os.PathLike[str] | None = None) -> Path:
        """Write the ledger atomically to ``path`` (default: its own path)."""
        target = Path(path) if path is not None else self._path
        if target is None:
            raise LedgerError("this ledger has no path; pass one to save()")
        return self._write(target, self._entries)

    def _write(self, target: Path, entries: tuple[LedgerEntry, ...]) -> Path:
        return write_ledger_document(target, self.to_json(entries))

    # ----------------------------------------------------------------- queries

    @property
    def total_epsilon(self) -> float:
        return self._total

    @property
    def delta(self) -> float:
        return self._delta

    @property
    def stages(self) -> Mapping[str, float]:
        """Stage name → ε cap (read-only)."""
        return self._stages

    @property
    def neighbouring(self) -> Neighbouring:
        return self._neighbouring

    @property
    def pld_discretization(self) -> float:
        return self._discretization

    @property
    def reproducible_noise(self) -> bool:
        """Whether the mechanisms' noise is seeded (then the ledger's ε is not a DP guarantee)."""
        return self._reproducible

    @property
    def is_dp(self) -> bool:
        """Whether the ε of this ledger is a DP guarantee: only when every mechanism drew secure noise."""
        return not self._reproducible

    def check_noise(self, noise: "NoiseSource") -> None:
        """Refuse a non-secure noise source on a ledger that promises secure noise.

        Raises:
            LedgerError: ``noise`` is seeded but this ledger was made for secure noise.
        """
        if not self._reproducible and not getattr(noise, "secure", False):
            raise LedgerError(f"this ledger promises secure noise, but the mechanism draws from "
                              f"{type(noise).__name__}, which is reproducible from its seed and gives no privacy; "
                              "use SecureNoise, or make the ledger with reproducible_noise=True (then it says "
                              "the run is not DP)")

    @property
    def path(self) -> Path | None:
        return self._path

    @property
    def history(self) -> tuple[LedgerEntry, ...]:
        """Every accepted charge, oldest first."""
        return self._entries

    def events(self, stage: str | None = None) -> tuple[PrivacyEvent, ...]:
        """The events charged to ``stage`` (all stages if ``None``)."""
        if stage is not None:
            self._check_stage(stage)
        return tuple(e.event for e in self._entries if stage is None or e.stage == stage)

    def account(self, stage: str | None = None) -> PrivacyAccount:
        """The accountant's full verdict for ``stage`` (or for everything)."""
        return self._account(self.events(stage))

    def spent(self, stage: str | None = None) -> float:
        """ε spent by ``stage`` (or in total), as the accountant composes it."""
        return self.account(stage).epsilon

    def remaining(self, stage: str | None = None) -> float:
        """Cap minus ε spent, for ``stage`` (or in total).

        ε does not add up linearly, so this is a gauge, not a promise: use
        :meth:`can_afford` to know whether a given event fits.
        """
        cap = self._total if stage is None else self._stages[self._check_stage(stage)]
        return max(cap - self.spent(stage), 0.0)

    def can_afford(self, stage: str, event: PrivacyEvent) -> bool:
        """Whether :meth:`charge` would accept ``event`` for ``stage`` now. Charges nothing."""
        try:
            self._admit(stage, event, description="", time="")
        except BudgetExceeded:
            return False
        return self._parent is None or self._parent[0].can_afford(self._parent[1], event)

    # ----------------------------------------------------------------- charging

    def bind(self, parent: "BudgetLedger", stage: str) -> None:
        """Charge every later event also to ``parent``'s ``stage``, and only if ``parent`` accepts it there.

        Raises:
            LedgerError: ``parent`` has no such stage, or another δ, neighbouring relation or noise source (its ε
                would not bound the same guarantee), or this ledger is bound already.
        """
        parent._check_stage(stage)
        if self._parent is not None:
            raise LedgerError("this ledger is bound to a parent ledger already")
        mine = (self._delta, self._neighbouring, self._reproducible)
        theirs = (parent._delta, parent._neighbouring, parent._reproducible)
        if mine != theirs:
            raise LedgerError(f"a parent ledger must have the same δ, neighbouring relation and noise source: "
                              f"this ledger has {mine}, the parent {theirs}")
        self._parent = (parent, stage)

    def charge(self, stage: str, event: PrivacyEvent, *, description: str = "",
               noise: "NoiseSource | None" = None) -> LedgerEntry:
        """Record ``event`` for ``stage`` if both the stage cap and the total allow it.

        Call this before drawing any noise; release only if it returns.

        Args:
            noise: The source the mechanism will draw from; every pcevolve mechanism passes it,
                so that a secure ledger can refuse seeded noise (:meth:`check_noise`).

        Returns:
            The new history entry (already saved when the ledger has a path).

        Raises:
            BudgetExceeded: the stage or the total would be overspent, here or in the parent ledger
                (:meth:`bind`); nothing changed.
            LedgerError: unknown stage, or seeded noise on a ledger for secure noise.
            OSError: the ledger file could not be written; nothing changed.
        """
        if noise is not None:
            self.check_noise(noise)
        if self._unsigned_copy_of_signed:
            raise LedgerError(f"{self._path} is signed with its run's key; load it with that key to charge it")
        entry = self._admit(stage, event, description=description, time=self._clock())
        if self._parent is not None:  # after this ledger's own check, before its write (module docstring)
            parent, as_stage = self._parent
            parent.charge(as_stage, event, description=f"{stage}: {description}" if description else stage,
                          noise=noise)
        entries = (*self._entries, entry)
        if self._path is not None:
            self._write(self._path, entries)
        self._entries = entries
        logger.info("ledger: %s charged %s; stage ε %.4g of %.4g, total ε %.4g of %.4g (%s)", stage,
                    event.describe(), entry.stage_epsilon, self._stages[stage], entry.total_epsilon, self._total,
                    entry.bound)
        return entry

    def _admit(self, stage: str, event: PrivacyEvent, *, description: str, time: str) -> LedgerEntry:
        self._check_stage(stage)
        if not isinstance(event, PrivacyEvent):
            raise TypeError(f"the ledger takes pcevolve privacy events, got {type(event).__name__}")
        if not isinstance(description, str):
            raise TypeError("description must be a string")
        cap = self._stages[stage]
        stage_after = self._account((*self.events(stage), event))
        if stage_after.epsilon > cap or (cap == 0.0 and not isinstance(event, PostProcessing)):
            raise self._refusal(stage, event, "stage", stage_after.epsilon, cap, self.spent(stage))
        total_after = self._account((*self.events(), event))
        if total_after.epsilon > self._total:
            raise self._refusal(stage, event, "total", total_after.epsilon, self._total, self.spent())
        return LedgerEntry(
            index=len(self._entries), time=time, stage=stage, event=event, description=description,
            stage_epsilon=stage_after.epsilon, total_epsilon=total_after.epsilon, bound=total_after.bound,
            pld_epsilon=total_after.pld_bound, rdp_epsilon=total_after.rdp_epsilon,
        )

    def _refusal(self, stage: str, event: PrivacyEvent, scope: str, would_reach: float, cap: float,
                 spent: float) -> BudgetExceeded:
        return BudgetExceeded(stage=stage, event=event, scope=scope, would_reach=would_reach, cap=cap, spent=spent,
                              request_epsilon=self._account([event]).epsilon, delta=self._delta)

    def _account(self, events: tuple[PrivacyEvent, ...] | list[PrivacyEvent]) -> PrivacyAccount:
        return account(events, delta=self._delta, neighbouring=self._neighbouring,
                       pld_discretization=self._discretization)

    def _check_stage(self, stage: str) -> str:
        if stage not in self._stages:
            raise LedgerError(f"unknown stage {stage!r}; this ledger has stages {sorted(self._stages)}")
        return stage
