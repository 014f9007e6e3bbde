"""Calls side by side: order, errors, and one lane while the turn's other core is taken."""

from __future__ import annotations

import threading

import pytest

from assistant_bridge.filters import lanes

pytestmark = pytest.mark.unit


@pytest.fixture(autouse=True)
def two_lanes(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(lanes, "LANES", 2)


def test_results_come_in_order_from_two_threads() -> None:
    names: list[str] = []

    def call(i: int) -> int:
        names.append(threading.current_thread().name)
        return i * i

    assert lanes.side_by_side([lambda i=i: call(i) for i in range(5)], "t") == [0, 1, 4, 9, 16]
    assert set(names) == {threading.current_thread().name, "t-1"}
    assert lanes.side_by_side([]) == []


def test_an_error_is_raised_in_the_caller_after_every_lane_stopped() -> None:
    done: list[int] = []

    def fails() -> int:
        raise ValueError("model call failed")

    def slow() -> int:
        threading.Event().wait(0.05)
        done.append(1)
        return 1

    with pytest.raises(ValueError, match="model call failed"):
        lanes.side_by_side([fails, slow])
    assert done == [1]


def test_occupied_keeps_the_calls_in_this_thread() -> None:
    me = threading.current_thread().name
    with lanes.occupied():
        assert not lanes.free()
        with lanes.occupied():
            pass
        assert not lanes.free()
        names = lanes.side_by_side([lambda: threading.current_thread().name] * 3)
    assert names == [me] * 3 and lanes.free()
    seen: list[bool] = []
    with lanes.occupied():  # another thread's turn is not this one's
        t = threading.Thread(target=lambda: seen.append(lanes.free()))
        t.start()
        t.join()
    assert seen == [True]
