"""What a run really issued, as CUDA recorded it: the run is captured into a CUDA graph on its own
stream, and the graph's nodes are read back through the driver (kernel nodes with their function
name, grid, block and dynamic shared memory; memcpy and memset nodes by kind).

This is how the tests check that a kernel's launch plan (what the model prices) is what runs, with
no help from the executor that ran it. It needs a driver that can name a captured function
(``cuFuncGetName``, CUDA 12.3 and later).
"""
from __future__ import annotations

import ctypes
from dataclasses import dataclass

from .device import cupy
from .errors import GPUUnavailableError

RELAXED = 2          # CU_STREAM_CAPTURE_MODE_RELAXED: CuPy may allocate while the run is captured
KINDS = {0: "kernel", 1: "memcpy", 2: "memset", 3: "host", 4: "graph", 5: "empty", 6: "wait", 7: "record",
         10: "alloc", 11: "free"}


@dataclass(frozen=True)
class Issued:
    kind: str                          # kernel, memcpy, memset, ...
    function: str = ""                 # a kernel's name
    grid: tuple[int, int, int] = (0, 0, 0)
    block: tuple[int, int, int] = (0, 0, 0)
    shared: int = 0


class _KernelNodeParams(ctypes.Structure):      # CUDA_KERNEL_NODE_PARAMS_v2 (CUDA 12 and later)
    _fields_ = [("func", ctypes.c_void_p), ("gridDimX", ctypes.c_uint), ("gridDimY", ctypes.c_uint),
                ("gridDimZ", ctypes.c_uint), ("blockDimX", ctypes.c_uint), ("blockDimY", ctypes.c_uint),
                ("blockDimZ", ctypes.c_uint), ("sharedMemBytes", ctypes.c_uint),
                ("kernelParams", ctypes.c_void_p), ("extra", ctypes.c_void_p), ("kern", ctypes.c_void_p),
                ("ctx", ctypes.c_void_p), ("padding", ctypes.c_byte * 64)]


def _driver():
    try:
        lib = ctypes.CDLL("libcuda.so.1")
    except OSError as exc:
        raise GPUUnavailableError(f"capture: the CUDA driver library cannot be loaded ({exc})") from None
    return lib


def _check(code: int, what: str) -> None:
    if code != 0:
        raise RuntimeError(f"capture: {what} failed with CUDA driver error {code}")


def _name(lib, params: _KernelNodeParams) -> str:
    name = ctypes.c_char_p()
    if params.func:
        _check(lib.cuFuncGetName(ctypes.byref(name), ctypes.c_void_p(params.func)), "cuFuncGetName")
    else:
        _check(lib.cuKernelGetName(ctypes.byref(name), ctypes.c_void_p(params.kern)), "cuKernelGetName")
    return name.value.decode()


def _ordered(lib, graph) -> list:
    """The graph's nodes in the order the stream issued them (a captured stream is one chain)."""
    count = ctypes.c_size_t(0)
    _check(lib.cuGraphGetNodes(graph, None, ctypes.byref(count)), "cuGraphGetNodes")
    nodes = (ctypes.c_void_p * max(1, count.value))()
    _check(lib.cuGraphGetNodes(graph, nodes, ctypes.byref(count)), "cuGraphGetNodes")
    if count.value < 2:
        return list(nodes[:count.value])
    edges = ctypes.c_size_t(0)
    _check(lib.cuGraphGetEdges(graph, None, None, ctypes.byref(edges)), "cuGraphGetEdges")
    src, dst = (ctypes.c_void_p * edges.value)(), (ctypes.c_void_p * edges.value)()
    _check(lib.cuGraphGetEdges(graph, src, dst, ctypes.byref(edges)), "cuGraphGetEdges")
    after = {s: d for s, d in zip(src[:edges.value], dst[:edges.value])}
    heads = set(nodes[:count.value]) - set(dst[:edges.value])
    order, node = [], next(iter(heads)) if len(heads) == 1 else None
    while node is not None:
        order.append(node)
        node = after.get(node)
    return order if len(order) == count.value else list(nodes[:count.value])


def issued(run) -> list[Issued]:
    """What ``run()`` issues on the current device, in order. Run it once before (compiling and
    allocating are not launches); a run that synchronises cannot be captured."""
    cp, lib = cupy(), _driver()
    stream = cp.cuda.Stream(non_blocking=True)
    handle, graph = ctypes.c_void_p(stream.ptr), ctypes.c_void_p()
    with stream:
        _check(lib.cuStreamBeginCapture_v2(handle, RELAXED), "cuStreamBeginCapture")
        try:
            run()
        finally:
            _check(lib.cuStreamEndCapture(handle, ctypes.byref(graph)), "cuStreamEndCapture")
    try:
        out = []
        for node in _ordered(lib, graph):
            kind = ctypes.c_int(-1)
            _check(lib.cuGraphNodeGetType(ctypes.c_void_p(node), ctypes.byref(kind)), "cuGraphNodeGetType")
            if KINDS.get(kind.value) != "kernel":
                out.append(Issued(KINDS.get(kind.value, str(kind.value))))
                continue
            params = _KernelNodeParams()
            _check(lib.cuGraphKernelNodeGetParams_v2(ctypes.c_void_p(node), ctypes.byref(params)),
                   "cuGraphKernelNodeGetParams")
            out.append(Issued("kernel", _name(lib, params), (params.gridDimX, params.gridDimY, params.gridDimZ),
                              (params.blockDimX, params.blockDimY, params.blockDimZ), params.sharedMemBytes))
        return out
    finally:
        lib.cuGraphDestroy(graph)
