"""The compiled resources of a kernel instance (registers, static shared and local memory per block), which
the physical model needs for occupancy: compiling is enough, nothing runs.

On a GPU, CuPy compiles the instance (NVRTC) and reports the function's attributes; the module it
builds is the one the run uses. Without a GPU, ``nvcc -cubin`` with ptxas's report (``-Xptxas -v``)
gives the same numbers for the target architecture. Without either, a typical 32 registers and the
source's own shared arrays are *assumed*, and the answer says so. Answers are kept in the data
directory by the instance's hash, so a space is compiled once per machine, not once per study.
"""
from __future__ import annotations

import json
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from ..costmodel.physical.machine import KernelResources

ASSUMED_REGISTERS = 32
NVCC_TIMEOUT_S = 120


@dataclass(frozen=True)
class Compiled:
    """What compiling one instance told: its resources, how they were found, or why it does not compile."""

    resources: KernelResources | None
    how: str                     # "cupy", "nvcc sm_90", "assumed", or "failed"
    error: str = ""


def _cache_file() -> Path:
    from ..tuner.storage import data_dir

    return data_dir() / "kernel_resources.json"


def _read_cache() -> dict:
    try:
        return json.loads(_cache_file().read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}


def remember(found: dict[str, Compiled]) -> None:
    """Keep measured resources by instance key (assumptions and failures are not kept: a later machine with a
    compiler answers them)."""
    keep = {k: [c.resources.registers, c.resources.static_shared, c.resources.local, c.how]
            for k, c in found.items() if c.resources is not None and c.how != "assumed"}
    if not keep:
        return
    cache = _read_cache()
    cache.update(keep)
    path = _cache_file()
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(cache), encoding="utf-8")
    tmp.replace(path)


def recalled(keys: list[str]) -> dict[str, Compiled]:
    """What compiling these instances said before, on this machine (the kept file read once)."""
    if not keys:
        return {}
    kept = _read_cache()
    return {k: Compiled(KernelResources(*kept[k][:3]), kept[k][3]) for k in keys if k in kept}


def with_cupy(key: str, name: str) -> Compiled:
    """Compile the registered instance ``key`` with CuPy and read the function's attributes."""
    from .device import function
    from .errors import KernelLaunchError

    try:
        fn = function(key, name)
        return Compiled(KernelResources(int(fn.num_regs), int(fn.shared_size_bytes), int(fn.local_size_bytes)), "cupy")
    except KernelLaunchError as exc:
        return Compiled(None, "failed", str(exc))


_ENTRY = re.compile(r"Compiling entry function '([^']+)'")
_USED = re.compile(r"Used (\d+) registers(?:.*?(\d+) bytes smem)?")
_STACK = re.compile(r"(\d+) bytes stack frame, (\d+) bytes spill stores")


def ptxas_report(text: str, name: str) -> KernelResources | None:
    """The resources of kernel ``name`` in ptxas's verbose report (a mangled C++ name matches by its part)."""
    blocks = re.split(r"(?=ptxas info\s*: Compiling entry function)", text)
    plain = name.split("<")[0].split("::")[-1]
    for block in blocks:
        entry = _ENTRY.search(block)
        used = _USED.search(block)
        if not entry or not used or not (entry.group(1) == name or plain in entry.group(1)):
            continue
        stack = _STACK.search(block)
        local = int(stack.group(1)) + int(stack.group(2)) if stack else 0
        return KernelResources(int(used.group(1)), int(used.group(2) or 0), local)
    return None


def with_nvcc(code: str, name: str, options: tuple[str, ...], arch: str) -> Compiled:
    """Compile ``code`` to a cubin for ``arch`` with nvcc and read ptxas's report of kernel ``name``."""
    nvcc = shutil.which("nvcc")
    if nvcc is None:
        return assumed(code)
    with tempfile.TemporaryDirectory(prefix="memtune-nvcc-") as folder:
        src = Path(folder) / "kernel.cu"
        src.write_text(code, encoding="utf-8")
        flags = [o for o in options if o.startswith(("-D", "-I", "--use_fast_math", "-std", "--std", "-U"))]
        cmd = [nvcc, "-cubin", f"-arch={arch}", "-Xptxas", "-v", "-std=c++17", *flags, "-o", str(Path(folder) / "k.cubin"),
               str(src)]
        try:
            done = subprocess.run(cmd, capture_output=True, text=True, timeout=NVCC_TIMEOUT_S)
        except (OSError, subprocess.TimeoutExpired) as exc:
            return Compiled(None, "failed", f"nvcc: {type(exc).__name__}")
    if done.returncode:
        first = next((ln for ln in done.stderr.splitlines() if "error" in ln), done.stderr.strip()[:200])
        return Compiled(None, "failed", f"nvcc: {first.strip()}")
    found = ptxas_report(done.stderr, name)
    if found is None:
        return Compiled(None, "failed", f"nvcc compiled no kernel {name!r}")
    return Compiled(found, f"nvcc {arch}")


def assumed(code: str) -> Compiled:
    """No compiler here: 32 registers and the shared arrays the source declares with literal sizes."""
    return Compiled(KernelResources(ASSUMED_REGISTERS, static_shared_bytes(code)), "assumed")


_SHARED = re.compile(r"__shared__\s+(?:volatile\s+)?(?:unsigned\s+)?(\w+)\s+\w+\s*((?:\[[^\]]+\])+)")
_SIZES = {"float": 4, "int": 4, "unsigned": 4, "double": 8, "long": 8, "char": 1, "short": 2, "half": 2,
          "float2": 8, "float4": 16, "double2": 16, "int2": 8, "int4": 16}


def static_shared_bytes(code: str) -> int:
    """Bytes of the ``__shared__`` arrays whose sizes are arithmetic on numbers once the defines are applied
    (an array whose size cannot be read so counts nothing)."""
    defines = dict(re.findall(r"^\s*#define\s+(\w+)\s+(\S+)\s*$", code, flags=re.M))
    total = 0
    for ctype, dims in _SHARED.findall(code):
        count = 1
        for expr in re.findall(r"\[([^\]]+)\]", dims):
            expr = re.sub(r"\b([A-Za-z_]\w*)\b", lambda m: defines.get(m.group(1), m.group(1)), expr)
            if not re.fullmatch(r"[\d\s+\-*/()]+", expr):
                count = 0
                break
            count *= int(eval(expr.replace("/", "//"), {"__builtins__": {}}))   # digits and operators only
        total += count * _SIZES.get(ctype, 4)
    return total


def arch_of(device: str) -> str:
    """The SM architecture of a device as named in a machine file (Hopper's sm_90 where it is not known)."""
    lowered = device.lower()
    for names, arch in ((("h100", "h200", "gh200", "h800", "h20"), "sm_90"), (("b200", "b100", "gb200"), "sm_100"),
                        (("a100", "a800", "a30"), "sm_80"), (("l40", "l4", "4090", "ada"), "sm_89"),
                        (("a10", "a40", "3090", "a6000"), "sm_86"), (("v100",), "sm_70"), (("t4",), "sm_75")):
        if any(n in lowered for n in names):
            return arch
    return "sm_90"
