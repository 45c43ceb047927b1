"""The ledger refuses before overspending, changes nothing when it refuses, and resumes from its file."""

import json
import math
import re
from pathlib import Path

import hypothesis
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from privacy_helpers import SEED_STAGES

import pcevolve.privacy.ledger_file as ledger_file_module
from pcevolve.config import PrivacyConfig
from pcevolve.privacy import (
    BudgetExceeded,
    BudgetLedger,
    DPSGDMechanism,
    ExponentialSelection,
    GaussianMechanism,
    GaussianRelease,
    GeneratorNoise,
    LaplaceRelease,
    LedgerCorrupt,
    LedgerError,
    PostProcessing,
    SecureNoise,
    SubsampledGaussianSteps,
    account,
)
from pcevolve.privacy.ledger_file import _digest

DELTA = 1e-5


def seed_ledger(path=None) -> BudgetLedger:
    return BudgetLedger(8.0, DELTA, SEED_STAGES, path=path)


# ---------------------------------------------------------------- charging and refusing


def test_charge_records_history_with_accountant_epsilons():
    ledger = seed_ledger()
    entry = ledger.charge("release", GaussianRelease(2.0), description="class means")
    assert entry.index == 0 and entry.stage == "release" and entry.description == "class means"
    assert entry.stage_epsilon == entry.total_epsilon == account([GaussianRelease(2.0)], delta=DELTA).epsilon
    ledger.charge("representation", SubsampledGaussianSteps(0.128, 5.0, 100))
    assert len(ledger.history) == 2
    assert ledger.spent("release") == entry.stage_epsilon
    expected_total = account([GaussianRelease(2.0), SubsampledGaussianSteps(0.128, 5.0, 100)], delta=DELTA)
    assert ledger.spent() == expected_total.epsilon
    assert ledger.history[-1].total_epsilon == expected_total.epsilon
    assert ledger.remaining("release") == pytest.approx(5.0 - entry.stage_epsilon)


def test_stage_overspend_is_refused_with_a_message_naming_stage_request_and_remainder():
    ledger = seed_ledger()
    ledger.charge("representation", GaussianRelease(2.0))
    with pytest.raises(BudgetExceeded) as info:
        ledger.charge("representation", GaussianRelease(0.5))
    error = info.value
    assert error.stage == "representation" and error.scope == "stage" and error.cap == 3.0
    assert error.would_reach > 3.0
    assert error.request_epsilon == account([GaussianRelease(0.5)], delta=DELTA).epsilon
    message = str(error)
    assert "representation" in message and "gaussian_release" in message and "left ε" in message
    assert f"{3.0 - ledger.spent('representation'):.4g}" in message


def test_zero_budget_stage_accepts_only_post_processing():
    ledger = seed_ledger()
    for event in (GaussianRelease(1e6), ExponentialSelection(1e-9), SubsampledGaussianSteps(1e-4, 100.0, 1)):
        with pytest.raises(BudgetExceeded, match="no privacy budget"):
            ledger.charge("delivery", event)
    ledger.charge("delivery", PostProcessing(), description="decode the synthetic set")
    assert ledger.spent("delivery") == 0.0 and len(ledger.history) == 1


def test_total_budget_binds_even_when_every_stage_cap_allows():
    # Stage caps sum to the total; two stages spending their caps with different mechanisms can compose to
    # more than either cap, but never more than the total: probe the total check directly.
    ledger = BudgetLedger(1.0, DELTA, {"a": 1.0, "b": 0.0})
    ledger.charge("a", LaplaceRelease(2.0))  # ε = 0.5
    with pytest.raises(BudgetExceeded):
        ledger.charge("a", LaplaceRelease(1.0))  # would reach 1.5 > 1
    generous = BudgetLedger(1.0, DELTA, {"a": 0.6, "b": 0.4})
    generous.charge("a", LaplaceRelease(2.0))
    generous.charge("b", LaplaceRelease(1 / 0.399))
    assert generous.spent() <= 1.0


def test_total_refusal_names_the_total_budget(monkeypatch):
    ledger = BudgetLedger(2.0, DELTA, {"a": 1.0, "b": 1.0})
    ledger.charge("a", LaplaceRelease(1.0))
    real_account = ledger._account

    def inflated(events):  # make the total composition look worse than the stage's, to reach that branch
        result = real_account(events)
        if len(events) > 1:
            return type(result)(**{**result.__dict__, "epsilon": 2.5})
        return result

    monkeypatch.setattr(ledger, "_account", inflated)
    with pytest.raises(BudgetExceeded) as info:
        ledger.charge("b", LaplaceRelease(2.0))
    assert info.value.scope == "total" and "the total budget" in str(info.value)


def test_refused_charge_changes_nothing(tmp_path):
    path = tmp_path / "ledger.json"
    ledger = seed_ledger(path)
    ledger.charge("release", GaussianRelease(1.0))
    before = (ledger.history, ledger.spent(), ledger.spent("release"), path.read_bytes())
    with pytest.raises(BudgetExceeded):
        ledger.charge("release", GaussianRelease(0.1))
    assert (ledger.history, ledger.spent(), ledger.spent("release"), path.read_bytes()) == before
    assert ledger.can_afford("release", GaussianRelease(3.0))
    assert not ledger.can_afford("release", GaussianRelease(0.1))
    assert ledger.history == before[0]  # can_afford charges nothing


def test_unknown_stage_and_foreign_events_are_errors():
    ledger = seed_ledger()
    with pytest.raises(LedgerError, match="unknown stage 'evaluation'"):
        ledger.charge("evaluation", GaussianRelease(1.0))
    with pytest.raises(TypeError):
        ledger.charge("release", "gaussian")  # type: ignore[arg-type]
    assert ledger.history == ()


def test_invalid_budgets_are_refused():
    with pytest.raises(ValueError, match="exceeds the total"):
        BudgetLedger(4.0, DELTA, SEED_STAGES)  # the fitness cap 5 alone is more than the total
    BudgetLedger(6.0, DELTA, SEED_STAGES)  # caps summing to more than the total are allocations; the total guards
    with pytest.raises(ValueError):
        BudgetLedger(8.0, 0.0, SEED_STAGES)
    with pytest.raises(ValueError):
        BudgetLedger(8.0, DELTA, {"a": -1.0})
    with pytest.raises(ValueError):
        BudgetLedger(8.0, DELTA, {})


def test_ledger_does_not_sum_naively():
    # 100 releases at z=10 cost ε ≈ 0.34 each at δ=1e-5: a summing ledger would refuse after 23 of them.
    ledger = BudgetLedger(8.0, DELTA, {"release": 8.0})
    single = account([GaussianRelease(10.0)], delta=DELTA).epsilon
    assert 100 * single > 30
    for _ in range(100):
        ledger.charge("release", GaussianRelease(10.0))
    assert len(ledger.history) == 100
    # Composed, they are one Gaussian release at z=1: ε = 4.377 (analytic), far below the naive 34.
    assert 4.377 <= ledger.spent() < 4.39
    assert ledger.spent() < 0.15 * 100 * single


def test_dpsgd_charged_per_epoch_gives_the_same_epsilon_as_one_event():
    per_epoch = seed_ledger()
    for _ in range(78):
        per_epoch.charge("representation", SubsampledGaussianSteps(0.128, 4.6, 8))
    per_epoch.charge("representation", SubsampledGaussianSteps(0.128, 4.6, 1))
    whole = seed_ledger()
    whole.charge("representation", SubsampledGaussianSteps(0.128, 4.6, 625))
    assert per_epoch.spent("representation") == whole.spent("representation") <= 3.0


def test_from_config_uses_the_run_budget():
    ledger = BudgetLedger.from_config(PrivacyConfig(neighbouring="replace_one",
                                                    split={"representation": 0.375, "release": 0.625}))
    assert ledger.total_epsilon == 8.0 and ledger.delta == 1e-5 and ledger.neighbouring == "replace_one"
    assert dict(ledger.stages) == {**SEED_STAGES, "verdict": 0.0}  # shares 3/8 and 5/8 of 8
    scaled = BudgetLedger.from_config(PrivacyConfig(), caps={"representation": 3.9, "release": 6.5})
    assert dict(scaled.stages) == {"representation": 3.9, "release": 6.5}


# ---------------------------------------------------------------- persistence and resume


def test_saved_after_every_charge_and_reloaded_exactly(tmp_path):
    path = tmp_path / "run" / "ledger.json"
    ledger = seed_ledger(path)
    assert BudgetLedger.load(path).history == ()
    ledger.charge("representation", SubsampledGaussianSteps(0.128, 4.6, 300), description="epochs 1-38")
    ledger.charge("release", GaussianRelease(1.2))
    ledger.charge("release", ExponentialSelection(0.5, 3))
    reloaded = BudgetLedger.load(path)
    assert reloaded.history == ledger.history
    assert reloaded.spent() == ledger.spent()
    assert list(reloaded.stages) == list(SEED_STAGES)  # pipeline order survives
    assert reloaded.path == path
    document = json.loads(path.read_text())
    assert document["summary"]["total"]["epsilon"] == ledger.spent()
    assert [e["mechanism"] for e in document["entries"]] == [
        "subsampled_gaussian_steps", "gaussian_release", "exponential_selection"]


def test_reloaded_ledger_refuses_what_the_original_refuses_and_keeps_saving(tmp_path):
    path = tmp_path / "ledger.json"
    original = seed_ledger(path)
    original.charge("representation", SubsampledGaussianSteps(0.128, 4.6, 600))
    resumed = BudgetLedger.load(path)
    too_much = SubsampledGaussianSteps(0.128, 4.6, 100)
    fits = SubsampledGaussianSteps(0.128, 4.6, 25)
    for ledger in (original, resumed):
        with pytest.raises(BudgetExceeded):
            ledger.charge("representation", too_much)
        assert ledger.can_afford("representation", fits)
    resumed.charge("representation", fits)
    assert len(BudgetLedger.load(path).history) == 2


def test_a_new_ledger_never_overwrites_an_existing_file(tmp_path):
    path = tmp_path / "ledger.json"
    seed_ledger(path).charge("release", GaussianRelease(1.0))
    with pytest.raises(FileExistsError):
        seed_ledger(path)
    assert len(BudgetLedger.load(path).history) == 1


def test_open_creates_or_resumes_and_refuses_changed_settings(tmp_path):
    path = tmp_path / "ledger.json"
    first = BudgetLedger.open(path, 8.0, DELTA, SEED_STAGES)
    first.charge("release", GaussianRelease(1.0))
    again = BudgetLedger.open(path, 8.0, DELTA, SEED_STAGES)
    assert again.history == first.history
    with pytest.raises(LedgerError, match="total_epsilon"):
        BudgetLedger.open(path, 10.0, DELTA, {**SEED_STAGES, "release": 7.0})
    with pytest.raises(LedgerError, match="neighbouring"):
        BudgetLedger.open(path, 8.0, DELTA, SEED_STAGES, neighbouring="replace_one")


def test_failed_write_leaves_the_ledger_unchanged(tmp_path, monkeypatch):
    path = tmp_path / "ledger.json"
    ledger = seed_ledger(path)
    ledger.charge("release", GaussianRelease(2.0))
    before = path.read_bytes()

    def broken_write(*args, **kwargs):
        raise OSError("disk full")

    monkeypatch.setattr(ledger_file_module, "atomic_write_json", broken_write)
    with pytest.raises(OSError):
        ledger.charge("release", GaussianRelease(2.0))
    assert len(ledger.history) == 1 and path.read_bytes() == before


def _rewrite(path: Path, edit) -> None:
    document = json.loads(path.read_text())
    edit(document)
    body = {k: v for k, v in document.items() if k not in ("integrity", "signature")}
    document["integrity"] = _digest(body)  # a "careful" editor who also fixes the hash
    path.write_text(json.dumps(document))


@pytest.fixture
def written_ledger(tmp_path) -> Path:
    path = tmp_path / "ledger.json"
    ledger = seed_ledger(path)
    ledger.charge("representation", SubsampledGaussianSteps(0.128, 4.6, 300))
    ledger.charge("release", GaussianRelease(1.0))
    return path


def test_edit_without_fixing_the_hash_is_detected(written_ledger):
    document = json.loads(written_ledger.read_text())
    document["entries"][1]["description"] = "harmless?"
    written_ledger.write_text(json.dumps(document))
    with pytest.raises(LedgerCorrupt, match="integrity"):
        BudgetLedger.load(written_ledger)


def test_edited_epsilon_is_detected_by_recomputation(written_ledger):
    def lower_epsilon(document):
        document["entries"][1]["stage_epsilon"] = 0.01

    _rewrite(written_ledger, lower_epsilon)
    with pytest.raises(LedgerCorrupt, match="entry 1 records stage ε"):
        BudgetLedger.load(written_ledger)


def test_edited_event_parameters_are_detected_by_recomputation(written_ledger):
    def more_noise(document):
        document["entries"][1]["event"]["noise_multiplier"] = 10.0  # pretend the release was noisier

    _rewrite(written_ledger, more_noise)
    with pytest.raises(LedgerCorrupt, match="its events give"):
        BudgetLedger.load(written_ledger)


def test_raised_budget_cannot_hide_overspending(written_ledger):
    def shrink_cap(document):
        for stage in document["settings"]["stages"]:
            if stage["name"] == "release":
                stage["cap"] = 0.5

    _rewrite(written_ledger, shrink_cap)
    with pytest.raises(LedgerCorrupt, match="overspends"):
        BudgetLedger.load(written_ledger)


@pytest.mark.parametrize(
    "content",
    ["", "{not json", "[]", '{"format": "something-else"}', '{"format": "pcevolve.privacy.ledger", "version": 99}'],
)
def test_unreadable_or_foreign_files_are_refused(tmp_path, content):
    path = tmp_path / "ledger.json"
    path.write_text(content)
    with pytest.raises(LedgerCorrupt):
        BudgetLedger.load(path)


def test_unknown_event_kind_in_file_is_refused(written_ledger):
    def unknown(document):
        document["entries"][0]["event"] = {"kind": "mystery", "noise_multiplier": 1.0}

    _rewrite(written_ledger, unknown)
    with pytest.raises(LedgerCorrupt, match="malformed"):
        BudgetLedger.load(written_ledger)


def test_missing_file_is_file_not_found(tmp_path):
    with pytest.raises(FileNotFoundError):
        BudgetLedger.load(tmp_path / "absent.json")


# ---------------------------------------------------------------- property: never over budget

events = st.one_of(
    st.builds(GaussianRelease, st.floats(0.3, 30.0), st.integers(1, 3)),
    st.builds(LaplaceRelease, st.floats(0.3, 20.0), st.integers(1, 2)),
    st.builds(ExponentialSelection, st.floats(0.05, 3.0), st.integers(1, 3)),
    st.builds(SubsampledGaussianSteps, st.floats(0.01, 0.3), st.floats(0.8, 5.0), st.integers(1, 30)),
    st.just(PostProcessing()),
)
charges = st.lists(st.tuples(st.sampled_from(["a", "b", "zero"]), events), min_size=1, max_size=8)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(cap_a=st.floats(0.2, 3.0), cap_b=st.floats(0.2, 3.0), slack=st.floats(0.0, 1.0), sequence=charges)
def test_ledger_never_reports_more_than_its_budget_and_refusals_change_nothing(
    tmp_path_factory, cap_a, cap_b, slack, sequence
):
    path = tmp_path_factory.mktemp("ledger") / "ledger.json"
    total = cap_a + cap_b + slack
    ledger = BudgetLedger(total, DELTA, {"a": cap_a, "b": cap_b, "zero": 0.0}, path=path,
                          pld_discretization=1e-2)
    caps = {"a": cap_a, "b": cap_b, "zero": 0.0}
    for stage, event in sequence:
        before = (ledger.history, path.read_bytes(), {s: ledger.spent(s) for s in caps}, ledger.spent())
        try:
            ledger.charge(stage, event)
        except BudgetExceeded:
            hypothesis.event("refused")
            after = (ledger.history, path.read_bytes(), {s: ledger.spent(s) for s in caps}, ledger.spent())
            assert after == before
        else:
            hypothesis.event("accepted")
            assert len(ledger.history) == len(before[0]) + 1
        for name, cap in caps.items():
            assert ledger.spent(name) <= cap
        assert ledger.spent() <= total
        assert all(e.total_epsilon <= total for e in ledger.history)
    reloaded = BudgetLedger.load(path)
    assert reloaded.history == ledger.history
    assert math.isclose(reloaded.spent(), ledger.spent())


def test_an_infinite_side_bound_does_not_break_the_file(tmp_path, monkeypatch):
    # If one of the two bounds is infinite while the reported one fits, the entry must still be written.
    path = tmp_path / "ledger.json"
    ledger = seed_ledger(path)
    real_account = ledger._account

    def no_rdp(events):
        result = real_account(events)
        return type(result)(**{**result.__dict__, "rdp_epsilon": math.inf})

    monkeypatch.setattr(ledger, "_account", no_rdp)
    entry = ledger.charge("release", GaussianRelease(2.0))
    assert entry.rdp_epsilon == math.inf
    assert json.loads(path.read_text())["entries"][0]["rdp_epsilon"] is None
    assert BudgetLedger.load(path).spent() == ledger.spent()


# ---------------------------------------------------------------- noise source, signature, dates


def test_a_secure_ledger_refuses_seeded_noise_before_anything_is_recorded():
    ledger = seed_ledger()
    seeded = GeneratorNoise(np.random.default_rng(0))
    with pytest.raises(LedgerError, match="promises secure noise"):
        GaussianMechanism(1.0, 2.0).release(np.zeros(3), ledger=ledger, stage="release", noise=seeded)
    with pytest.raises(LedgerError, match="promises secure noise"):
        DPSGDMechanism(0.1, 2.0, 1.0, 100).charge(ledger, "representation", 5, noise=seeded)
    assert ledger.history == () and ledger.is_dp
    GaussianMechanism(1.0, 2.0).release(np.zeros(3), ledger=ledger, stage="release", noise=SecureNoise())
    assert len(ledger.history) == 1


def test_dpsgd_steps_paid_on_a_secure_ledger_refuse_a_seeded_source():
    mechanism = DPSGDMechanism(0.1, 2.0, 1.0, 100)
    mechanism.charge(seed_ledger(), "representation", 2)  # no source named at the charge
    with pytest.raises(ValueError, match="secure noise"):
        mechanism.sample_batch(GeneratorNoise(np.random.default_rng(0)))
    assert mechanism.sample_batch(SecureNoise()).ndim == 1


def test_reproducible_ledger_says_not_dp_in_its_file_and_cannot_be_resumed_as_secure(tmp_path):
    path = tmp_path / "ledger.json"
    ledger = BudgetLedger(8.0, DELTA, SEED_STAGES, path=path, reproducible_noise=True)
    GaussianMechanism(1.0, 2.0).release(np.zeros(3), ledger=ledger, stage="release",
                                        noise=GeneratorNoise(np.random.default_rng(0)))
    document = json.loads(path.read_text())
    assert document["dp"] is False and "NOT DP" in document["notice"]
    assert document["settings"]["noise"] == "reproducible"
    assert not BudgetLedger.load(path).is_dp
    with pytest.raises(LedgerError, match="noise"):
        BudgetLedger.open(path, 8.0, DELTA, SEED_STAGES)  # a secure run cannot continue a seeded ledger


def test_signature_catches_a_careful_rewrite_and_a_wrong_key(tmp_path):
    path, key = tmp_path / "ledger.json", b"k" * 32
    ledger = BudgetLedger(8.0, DELTA, SEED_STAGES, path=path, key=key)
    ledger.charge("release", GaussianRelease(1.0))
    assert BudgetLedger.load(path, key=key).spent() == ledger.spent()

    def forget_everything(document):
        document["entries"] = []
        document["summary"]["total"]["epsilon"] = 0.0

    _rewrite(path, forget_everything)  # consistent and with a fixed hash: only the key can tell
    assert BudgetLedger.load(path).spent() == 0.0
    with pytest.raises(LedgerCorrupt, match="signature"):
        BudgetLedger.load(path, key=key)
    with pytest.raises(LedgerCorrupt, match="signature"):
        BudgetLedger.load(path, key=b"x" * 32)


def test_a_signed_ledger_loaded_without_its_key_is_read_only(tmp_path):
    path, key = tmp_path / "ledger.json", b"k" * 32
    BudgetLedger(8.0, DELTA, SEED_STAGES, path=path, key=key).charge("release", GaussianRelease(1.0))
    reader = BudgetLedger.load(path)
    with pytest.raises(LedgerError, match="key"):
        reader.charge("release", GaussianRelease(2.0))
    assert "signature" in json.loads(path.read_text())


def test_entries_carry_a_date_not_a_time(tmp_path):
    ledger = seed_ledger(tmp_path / "ledger.json")
    entry = ledger.charge("release", GaussianRelease(1.0))
    assert re.fullmatch(r"\d{4}-\d{2}-\d{2}", entry.time)


def test_version_one_ledgers_are_refused_with_the_reason(tmp_path):
    path = tmp_path / "ledger.json"
    path.write_text('{"format": "pcevolve.privacy.ledger", "version": 1}')
    with pytest.raises(LedgerCorrupt, match="version 1 did not record where its noise came from"):
        BudgetLedger.load(path)


def test_caps_summing_to_more_than_the_total_are_still_bound_by_the_total():
    ledger = BudgetLedger(1.0, DELTA, {"a": 0.8, "b": 0.8})
    ledger.charge("a", LaplaceRelease(1 / 0.7))  # ε 0.7 ≤ cap 0.8
    with pytest.raises(BudgetExceeded) as info:
        ledger.charge("b", LaplaceRelease(1 / 0.7))  # within b's cap, but the total would reach 1.4
    assert info.value.scope == "total" and ledger.spent() <= 1.0
