"""Named host-time marks inside an op range, for instruments that time the steps of an op (host_ranges.py).

Unset, a mark is one Python call that does nothing; host_ranges sets `sink` to a function that records the
name and time.perf_counter_ns().
"""
sink = None


def mark(name):
    if sink is not None:
        sink(name)
