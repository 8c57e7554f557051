import math

import pytest
import torch

from symgen.measures.collapse import collapse_stats, pairwise_cosines, row_stats, self_nearest


def test_identical_rows_have_cosine_one_and_cannot_be_told_apart():
    rows = torch.ones(6, 4) * 0.3
    stats = row_stats(rows)
    assert stats["mean_cos"] == pytest.approx(1.0)
    assert stats["cos_to_mean"] == pytest.approx(1.0)
    assert self_nearest(rows, rows) == pytest.approx(1 / 6)


def test_orthogonal_rows_have_cosine_zero_and_are_their_own_neighbours():
    rows = torch.eye(5) * 2.0
    stats = row_stats(rows, reference=torch.eye(3))
    assert stats["mean_cos"] == pytest.approx(0.0)
    assert stats["cos_p95"] == pytest.approx(0.0)
    assert stats["cos_to_mean"] == pytest.approx(1 / math.sqrt(5))
    assert stats["norm_ratio"] == pytest.approx(2.0)
    assert self_nearest(rows, rows) == 1.0


def test_rows_collapsed_onto_a_common_vector_lose_self_retrieval():
    g = torch.Generator().manual_seed(0)
    common = torch.randn(64, generator=g)
    rows = common + 0.01 * torch.randn(20, 64, generator=g)
    assert row_stats(rows)["mean_cos"] > 0.99
    assert self_nearest(rows, rows) < 0.2
    fresh = torch.randn(20, 64, generator=g) / 8
    assert abs(row_stats(fresh)["mean_cos"]) < 0.1
    assert self_nearest(fresh, fresh) == 1.0


def test_collapse_stats_reads_both_sides_and_the_seen_reference():
    emb = torch.eye(8)
    unemb = torch.ones(8, 8)
    stats = collapse_stats(emb, unemb, unseen=[4, 5, 6, 7], seen=[0, 1, 2, 3])
    assert stats["unseen_in_mean_cos"] == pytest.approx(0.0)
    assert stats["unseen_out_mean_cos"] == pytest.approx(1.0)
    assert stats["seen_in_mean_cos"] == pytest.approx(0.0)
    assert stats["unseen_in_norm_ratio"] == pytest.approx(1.0)
    assert len(pairwise_cosines(emb[:4])) == 6


def test_spread_tells_contracting_rows_from_a_common_drift():
    g = torch.Generator().manual_seed(0)
    fresh = torch.randn(200, 64, generator=g) / 8  # std 1/8 in 64 dimensions: spread ≈ 1
    drifted = fresh + 5 * torch.ones(64) / 8  # the same rows plus a common vector of norm 5
    contracted = 0.1 * fresh + torch.ones(64) / 8
    stats = {
        name: row_stats(rows) for name, rows in (("fresh", fresh), ("drift", drifted), ("shrunk", contracted))
    }
    assert stats["fresh"]["spread"] == pytest.approx(1.0, abs=0.05)
    # both read as collapsed by their cosine
    assert stats["drift"]["mean_cos"] > 0.9 and stats["shrunk"]["mean_cos"] > 0.9
    # but only the contracted rows lost their differences; the drifted ones kept them
    assert stats["drift"]["spread"] == pytest.approx(stats["fresh"]["spread"], rel=1e-6)
    assert stats["shrunk"]["spread"] == pytest.approx(0.1 * stats["fresh"]["spread"], rel=1e-6)
    assert stats["drift"]["mean_row_norm"] == pytest.approx(5.0, abs=0.15)
