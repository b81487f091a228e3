"""The soak's growth figure (``bench/soak.py``): a fit over the second half of the readings.

Memory that fills a bounded cache early in a soak and then stays level must read as flat, and
memory that grows with every record must not; computed from synthetic readings, nothing is run.
"""

from __future__ import annotations

from typing import Any

from bench.soak import render_soak, summarize


def _readings(rss: list[float]) -> dict[str, Any]:
    samples = [
        {
            "t_s": float(i),
            "records": 1_000 * i,
            "rss_mb": mb,
            "anon_mb": mb - 16.0,
            "file_mb": 16.0,
            "traced_mb": 2.0,
            "threads": 6,
        }
        for i, mb in enumerate(rss)
    ]
    return {
        "tables": ["ROU-DEMO"],
        "speed": 200.0,
        "seconds": float(len(rss)),
        "warmup_s": 60.0,
        "rss_after_warmup_mb": rss[0],
        "rss_end_mb": rss[-1],
        "records_after_warmup": 0,
        "records_end": 1_000 * (len(rss) - 1),
        "traced_growth_kb": 0.0,
        "samples": samples,
        "top_growth": [],
    }


def test_a_cache_that_fills_and_levels_off_is_flat() -> None:
    filling = [60.0 + 0.5 * i for i in range(5)] + [62.0] * 15
    soak = summarize(_readings(filling))
    assert soak["growth_mb"] == 2.0  # end to end it looks like growth
    assert soak["growth_mb_per_100k_records"] == 0.0
    assert soak["file_slope_mb_per_100k_records"] == 0.0
    assert "+0.00" in render_soak(soak)


def test_growth_with_every_record_is_its_slope() -> None:
    leaking = [60.0 + 0.02 * i for i in range(20)]  # 0.02 MB per 1,000 records
    soak = summarize(_readings(leaking))
    assert soak["growth_mb_per_100k_records"] == 2.0
    assert soak["anon_slope_mb_per_100k_records"] == 2.0
    assert soak["traced_slope_mb_per_100k_records"] == 0.0
    assert soak["fit_records"] == 9_000  # readings 10..19
