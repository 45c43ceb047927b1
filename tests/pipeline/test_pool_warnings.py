"""What a retrieval run warns of its pool: a class it holds too few of, by territory or by in-task mass."""

from __future__ import annotations

from pcevolve.pipeline.pool_warnings import thin_class_lines


def _lines(sizes, delivered, configured, drawers=("conv",), mass=None):
    return thin_class_lines(("coat", "bag"), territory_sizes=sizes, delivered=delivered, configured=configured,
                            mass=mass, noun="image", drawers=drawers)


def test_enough_of_every_class_says_nothing() -> None:
    assert _lines([300, 300], [200, 200], [200, 200]) == []


def test_a_thin_territory_says_how_many_to_ask_for() -> None:
    (line,) = _lines([150, 300], [200, 200], [200, 200])
    assert "only 150 public images look like class 'coat'" in line and "search.synthetic_per_class: 150" in line


def test_a_class_the_pool_lacks_points_to_a_drawing_decoder_or_a_pool() -> None:
    (line,) = _lines([10, 300], [200, 200], [200, 200])
    assert "may lack this class" in line and "decoder.name: conv" in line
    (line,) = _lines([10, 300], [200, 200], [200, 200], drawers=())
    assert "give a pool with more images like it, or ask for fewer (search.synthetic_per_class: 10)" in line


def test_a_class_the_in_task_estimate_finds_little_of_is_said() -> None:
    (line,) = _lines([300, 300], [200, 40], [200, 200], mass=[900.0, 40.2])
    assert "only about 40 public images look like class 'bag', fewer than half the 200 asked for; 40 delivered" in line
    # Delivering a fraction of a class the pool holds plenty of is the setting at work, not a warning.
    assert _lines([300, 300], [100, 100], [200, 200], mass=[200.0, 150.0]) == []
