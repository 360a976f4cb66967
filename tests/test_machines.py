import pytest

from memtune.costmodel import (DMM, HMM, UMM, AsyncHMM, ParameterError, PresetNotFoundError, load_preset, preset_names, symbol)


def test_models_hold_their_parameters_and_are_immutable():
    m = DMM(w=32, l=5, p=1024)
    assert m.parameters() == {"w": 32, "l": 5, "p": 1024}
    with pytest.raises(AttributeError):
        m.w = 16


@pytest.mark.parametrize("cls,kwargs,bad", [
    (DMM, dict(w=0, l=5), "w"),
    (UMM, dict(w=32, l=-1), "l"),
    (DMM, dict(w=32, l=5, p=0), "p"),
    (HMM, dict(d=0, p=256, w=32, l=2, L=400, m=64), "d"),
    (HMM, dict(d=4, p=256, w=32, l=2, L=400, m=2.5), "m"),
    (AsyncHMM, dict(d=4, p=256, w=32, l=2, L=True, m=64), "L"),
])
def test_bad_parameters_name_the_parameter(cls, kwargs, bad):
    with pytest.raises(ParameterError) as err:
        cls(**kwargs)
    assert err.value.name == bad
    assert str(err.value).startswith(f"{bad}:")


def test_symbols_are_shared_and_substitute_to_values():
    h = HMM(d=8, p=512, w=32, l=2, L=400, m=64)
    syms = h.symbols()
    assert syms["L"] is symbol("L") and syms["l"] is symbol("l") and syms["L"] != syms["l"]
    expr = symbol("n") / syms["w"] + syms["L"] - 1
    assert expr.subs(h.values()).subs(symbol("n"), 4096) == 4096 // 32 + 399
    assert syms["w"].is_positive and syms["w"].is_integer


def test_hmm_splits_into_its_dmm_and_umm():
    h = HMM(d=8, p=512, w=32, l=2, L=400, m=64)
    assert h.shared() == DMM(w=32, l=2, p=512)
    assert h.global_memory() == UMM(w=32, l=400, p=8 * 512)
    assert not h.asynchronous and AsyncHMM(**h.parameters()).asynchronous
    assert not AsyncHMM.shared_memory_survives_barrier


def test_presets_are_data_files_with_guesses_marked():
    assert set(preset_names()) >= {"gtx680", "gtx780ti", "gtxtitan", "h100"}
    h100 = load_preset("h100")
    assert h100.machine.d == 132 and h100.machine.w == 32
    assert h100.hardware["shared_memory_per_sm_bytes"] == 228 * 1024
    assert h100.hardware["l2_bytes"] == 50 * 1024 * 1024
    assert h100.is_guess("L") and h100.is_guess("l") and not h100.is_guess("d")
    # m is the tile side whose m^2 words fill the shared memory
    assert h100.machine.m ** 2 * 4 <= 228 * 1024 < (h100.machine.m + 1) ** 2 * 4
    gtx680 = load_preset("GTX-680")
    assert gtx680.machine.l == 1 and not gtx680.is_guess("l")  # 000 §4.5 states l = 1


def test_unknown_preset_lists_the_known_ones(tmp_path):
    with pytest.raises(PresetNotFoundError, match="h100"):
        load_preset("gtx9000")
    f = tmp_path / "mine.toml"
    f.write_text('name = "mine"\n[hmm]\nd = 2\np = 64\nw = 4\nl = 1\nL = { value = 9, guess = true }\nm = 8\n')
    mine = load_preset(f)
    assert mine.machine.L == 9 and mine.is_guess("L")
