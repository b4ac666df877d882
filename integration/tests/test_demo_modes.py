"""`ascend-ops demo`: a short run in every mode gives exactly the dense NumPy reference's tokens."""
from __future__ import annotations

import io

import numpy as np
import pytest

from ascend_ops.common import cli
from ascend_ops.demo import MODES, Config, run
from ascend_ops.demo import model, reference, runner

for _op in ("reshape_and_cache", "lightning_indexer", "sparse_flash_attention", "adv_step_flash"):
    pytest.importorskip(f"ascend_ops.{_op}", reason=f"ascend_ops.{_op} is not installed")

SHORT = Config(steps=3)


@pytest.fixture(scope="module")
def short_report():
    """One run of every mode (torch.compile with its default backend, inductor)."""
    pytest.importorskip("torch", reason="torch is not installed")
    pytest.importorskip("mindspore", reason="mindspore is not installed")
    out, err = io.StringIO(), io.StringIO()
    report = run(SHORT, MODES, out=out, err=err)
    return report, out.getvalue(), err.getvalue()


def test_reference_is_deterministic_and_margins_are_not_thin():
    w, p = model.weights(SHORT), model.plan(SHORT)
    a, b = reference.generate(SHORT, w, p), reference.generate(SHORT, w, p)
    np.testing.assert_array_equal(a.tokens, b.tokens)
    assert a.tokens.shape == (SHORT.batch, SHORT.steps + 1)
    # far above float32 rounding (~1e-6 relative): agreement is not luck
    assert a.min_logit_margin > 1e-4 and a.min_index_gap > 1e-5
    # the indexer really selects: some rows see more keys than sparse_count
    assert a.selections > 0


def test_engine_weights_are_the_reference_model_absorbed():
    """The engines' absorbed MLA (queries over the latent, output projection from the latent
    width) is the reference's un-absorbed MLA: scores and outputs agree to float32 rounding."""
    cfg = SHORT
    w = model.weights(cfg)
    norm1, w_proj, wo_latent, *_ = model.engine_layers(cfg, w)[0]
    o_q, o_qr, o_c, o_kr, *_ = model.proj_split(cfg)
    rng = np.random.default_rng(0)
    h = rng.standard_normal((3, cfg.hidden))
    c = h @ w["layer0.w_dkv"].astype(np.float64)
    q_nope = (h @ w["layer0.wq_nope"]).reshape(3, cfg.heads, cfg.qk_nope)
    k_nope = (c @ w["layer0.w_uk"]).reshape(3, cfg.heads, cfg.qk_nope)
    q_latent = (h @ w_proj[:, o_q:o_qr]).reshape(3, cfg.heads, cfg.latent)
    np.testing.assert_allclose(np.einsum("rhd,khd->rhk", q_nope, k_nope), np.einsum("rhd,kd->rhk", q_latent, c),
                               rtol=1e-4, atol=1e-4)
    v = (c @ w["layer0.w_uv"]).reshape(3, cfg.heads, cfg.v_dim)
    np.testing.assert_allclose(v.reshape(3, -1) @ w["layer0.wo"],
                               np.repeat(c, cfg.heads, axis=0).reshape(3, -1) @ wo_latent, rtol=1e-4, atol=1e-4)


def test_plan_pages_the_cache():
    p = model.plan(SHORT)
    used = p.block_tables[p.block_tables >= 0]
    assert len(set(used.tolist())) == len(used) and used.max() < p.num_blocks  # no block shared
    assert not all(np.all(np.diff(row[row >= 0]) == 1) for row in p.block_tables)  # not simply in order


@pytest.mark.parametrize("mode", MODES)
def test_every_mode_matches_the_reference(short_report, mode):
    report, out, _ = short_report
    result = next(r for r in report.results if r.mode == mode)
    assert result.status == runner.OK, (result.detail, out)
    np.testing.assert_array_equal(result.tokens, report.ref.tokens)
    assert len(result.step_s) == SHORT.steps


def test_report_has_speed_and_breakdown(short_report):
    report, out, err = short_report
    assert report.exit_status == 0
    assert "4 mode(s) produced exactly the reference tokens" in out
    assert "tokens/s" in out and "time per decode step" in out
    eager = next(r for r in report.results if r.mode == "torch eager").breakdown()
    assert {"reshape_and_cache", "lightning_indexer", "sparse_flash_attention", "adv_step_flash"} <= set(eager)
    graph = next(r for r in report.results if r.mode == "mindspore graph").breakdown()
    assert "graph (ops + model)" in graph and "lightning_indexer" not in graph
    assert "sparse_flash_attention" not in graph
    assert "steps" in err  # the progress bar


def test_plot(short_report, tmp_path):
    report, _, _ = short_report
    path = runner.write_plot(report, tmp_path / "demo.png")
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_a_wrong_token_is_reported_and_fails():
    pytest.importorskip("torch", reason="torch is not installed")
    cfg = Config(steps=1)
    w, p = model.weights(cfg), model.plan(cfg)
    want = reference.generate(cfg, w, p).tokens.copy()
    want[2, 1] = (want[2, 1] + 1) % cfg.vocab
    result = runner.run_mode("torch eager", cfg, w, p, want, err=io.StringIO())
    assert result.status == runner.MISMATCH
    assert "sequence 2, token 1" in result.detail


def test_a_missing_framework_is_skipped_with_the_reason(monkeypatch):
    monkeypatch.setattr(runner, "is_installed", lambda name: False)
    out = io.StringIO()
    report = run(Config(steps=1), ["mindspore graph"], out=out, err=io.StringIO())
    assert report.results[0].status == runner.SKIPPED
    assert "mindspore is not installed" in report.results[0].detail
    assert report.exit_status == 1  # nothing ran: not a success
    assert "FAILED: no mode ran" in out.getvalue()


def test_cli_demo_one_mode_with_plot(tmp_path, capsys):
    pytest.importorskip("torch", reason="torch is not installed")
    png = tmp_path / "breakdown.png"
    status = cli.main(["demo", "--mode", "torch-eager", "--steps", "2", "--plot", str(png)])
    out = capsys.readouterr().out
    assert status == 0, out
    assert "1 mode(s) produced exactly the reference tokens: torch eager" in out
    assert png.stat().st_size > 0


def test_cli_demo_rejects_bad_sizes(capsys):
    assert cli.main(["demo", "--steps", "0"]) == 2
    assert "steps should be >= 1" in capsys.readouterr().err


# --- int8 caches (--kv-cache-dtype int8) ----------------------------------------------------------
INT8 = Config(steps=3, kv_cache_dtype="int8")


def test_int8_reference_stores_codes_and_is_robust_to_boundary_codes():
    """The int8 reference reads back clip(rint(x / s)) * s, so it differs from the float model;
    flipping every code near a rounding boundary (what float32 engines may store there) leaves
    its tokens alone, so exact agreement is not luck."""
    w, p = model.weights(INT8), model.plan(INT8)
    float_ref = reference.generate(INT8, w, p)
    scales = model.kv_scales(INT8, float_ref.cache_amax)
    assert [tuple(a.shape for a in pair) for pair in scales] == [((INT8.latent,), (INT8.rope,))] * INT8.layers
    assert all(a.dtype == np.float32 and (a > 0).all() for pair in scales for a in pair)
    q = reference.generate(INT8, w, p, scales)
    assert 0 <= q.min_code_margin <= 0.5 and q.min_logit_margin > 1e-4
    flipped = reference.generate(INT8, w, p, scales, flip_below=runner.FLIP_BELOW)
    assert flipped.flipped > 0
    np.testing.assert_array_equal(flipped.tokens, q.tokens)
    # the quantizer is the contract's int8 rule: round half to even, clip to [-128, 127]
    quantize = reference._Quantizer()
    x = np.array([0.5, 1.5, -2.5, 300.0, -300.0, 0.26])
    np.testing.assert_array_equal(quantize(x, np.full(6, 0.5)) / 0.5, [1, 3, -5, 127, -128, 1])


@pytest.fixture(scope="module")
def int8_report():
    pytest.importorskip("ascend_ops.indexer_k_quant_and_cache", reason="ascend_ops.indexer_k_quant_and_cache "
                        "is not installed")
    out, err = io.StringIO(), io.StringIO()
    report = run(INT8, MODES, out=out, err=err)
    return report, out.getvalue()


@pytest.mark.parametrize("mode", MODES)
def test_int8_every_mode_matches_the_int8_reference(int8_report, mode):
    report, out = int8_report
    result = next(r for r in report.results if r.mode == mode)
    if result.status == runner.SKIPPED:
        pytest.skip(result.detail)
    assert result.status == runner.OK, (result.detail, out)
    np.testing.assert_array_equal(result.tokens, report.ref.tokens)


def test_int8_report_names_the_quantizing_ops(int8_report):
    report, out = int8_report
    assert report.sensitivity is not None and "tokens unchanged" in out
    eager = next(r for r in report.results if r.mode == "torch eager")
    if eager.status == runner.OK:
        assert {"reshape_and_cache", "indexer_k_quant_and_cache"} <= set(eager.breakdown())


def test_cli_rejects_an_unknown_kv_cache_dtype(capsys):
    with pytest.raises(SystemExit):
        cli.main(["demo", "--kv-cache-dtype", "fp8"])
    assert "invalid choice" in capsys.readouterr().err
