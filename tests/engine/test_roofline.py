import pytest

from engine.perf.roofline import FUSED_PASSES, UNFUSED_PASSES, norm_traffic


def test_layernorm_bf16_4096_squared_is_memory_bound_by_hand():
    traffic = norm_traffic(4096, 4096, bytes_per_element=2, kind="layernorm")
    assert traffic.bytes_moved == 2 * 4096 * 4096 * 2  # 67,108,864 bytes: read x, write y
    assert traffic.flops == 7 * 4096 * 4096
    assert traffic.intensity == pytest.approx(1.75)
    assert traffic.ridge == pytest.approx(67e12 / 4.8e12)  # ~13.96 FLOP/byte
    assert traffic.intensity < traffic.ridge
    assert traffic.memory_time_s == pytest.approx(67_108_864 / 4.8e12)  # ~14 us
    assert traffic.compute_time_s < traffic.memory_time_s / 5
    assert traffic.parameters == 8192


def test_fusing_the_residual_add_saves_a_fifth_of_the_traffic():
    traffic = norm_traffic(1024, 768, bytes_per_element=4, kind="rmsnorm")
    assert traffic.unfused_add_norm_bytes == 5 * 1024 * 768 * 4
    assert traffic.fused_add_norm_bytes == 4 * 1024 * 768 * 4
    assert traffic.fusion_saving == pytest.approx(1.25)
    # add: read x, r, write h; norm: read h, write y -> 5 passes; fused: read x, r, write h, y
    assert (UNFUSED_PASSES, FUSED_PASSES) == (5, 4)
    assert traffic.parameters == 768


def test_bad_shapes_are_refused():
    with pytest.raises(ValueError):
        norm_traffic(0, 10)
    with pytest.raises(ValueError):
        norm_traffic(10, 10, kind="batchnorm")
