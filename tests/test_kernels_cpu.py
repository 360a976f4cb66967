"""Kernel layer without a GPU: every .cu compiles with nvcc (sm_80, sm_90); wrappers check arguments."""
import shutil
import subprocess
from importlib import resources

import pytest

import kernels
from costmodel.errors import ParameterError

CU_FILES = sorted(p.name for p in resources.files("kernels").iterdir() if p.name.endswith(".cu"))


def test_cuda_sources_are_shipped():
    assert {"dmm_permutation.cu", "rap_transpose.cu", "hmm_permutation.cu", "conv_matmul.cu", "scan.cu"} <= set(CU_FILES)


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc is not installed on this machine")
@pytest.mark.parametrize("arch", ["sm_80", "sm_90"])
@pytest.mark.parametrize("cu", CU_FILES)
def test_every_cu_compiles(cu, arch, tmp_path):
    src = resources.files("kernels").joinpath(cu)
    proc = subprocess.run(["nvcc", "-std=c++17", "--cubin", f"-arch={arch}", str(src), "-o", str(tmp_path / "k.cubin")],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "k.cubin").stat().st_size > 0


def test_registry_names_follow_the_costmodel():
    from costmodel import algorithm_names

    cost_names = set(algorithm_names())
    for name in kernels.names():
        k = kernels.get(name)
        base = name.split("[")[0].removesuffix("_in_place")
        assert k.peer or getattr(k, "beyond_seeds", False) or base in cost_names, name


@pytest.mark.parametrize("name,params,bad", [
    ("hmm_transpose", {"rows": 5}, "rows"),
    ("hmm_permutation_d_designated", {"ept": 3}, "ept"),
    ("hmm_scheduled_permutation", {"mode": "fast"}, "mode"),
    ("dmm_copy", {"threads": 64}, "threads"),
    ("matmul_hmm", {"m": 32, "r": 8}, "r"),
    ("conv_hmm", {"p": 48}, "p"),
])
def test_bad_parameters_are_rejected_before_any_gpu_work(name, params, bad):
    with pytest.raises(ParameterError) as err:
        kernels.get(name).check_params(params)
    assert err.value.name == bad


def test_running_without_cupy_is_one_clear_error(monkeypatch):
    import builtins

    real_import = builtins.__import__

    def no_cupy(name, *args, **kwargs):
        if name == "cupy" or name.startswith("cupy."):
            raise ImportError("no cupy here")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_cupy)
    with pytest.raises(kernels.GPUUnavailableError, match="CuPy"):
        kernels.get("hmm_transpose").make_inputs(1024)


def test_unknown_kernel():
    with pytest.raises(ParameterError, match="^kernel:"):
        kernels.get("fft")
