"""The instruction mix of compiled kernels, read off their SASS (no GPU): what each warp of a launch issues, by the
SM pipe that executes it. For a cost the physical model does not price (it counts a launch's bytes, rounds, shared
wavefronts and FMAs, not its integer, logic and select instructions), so that the cause of an error can be measured.

    python bench/sass_mix.py --source shaped.cu --out DIR tiles_f64_f64_sat_w8_r8_v4 tiles_i32_i64_sat_w8_r8_v4 ...

Each function is compiled alone (``-DMEMTUNE_ONLY=<function>``, as memtune compiles it) with nvcc for ``--arch``
and disassembled with ``cuobjdump`` (from the PATH, or ``--cuobjdump``: Triton's wheel carries one, with the
``nvdisasm`` it needs beside it). The counts are static, of the function's code as written out: the shaped tiles'
loops over rows and vectors are unrolled, so a warp runs each line about once; a loop the compiler kept (a
look-back's) counts once; so each function's loops that hold a barrier are counted too (``barrier_loops``: a
block's pass of each, such as the matmul's slice loop on its checked and its unchecked tiles). Writes
``DIR/sass_mix.json`` and prints one line a function.
"""
from __future__ import annotations

import argparse
import bisect
import collections
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

KERNELS = Path(__file__).resolve().parents[1] / "kernels"

# The pipe each opcode issues to on sm_90. FMA: float32 arithmetic and the integer multiply-adds, IMAD (with its
# moves, IMAD.MOV), IMUL and IDP (NVIDIA's description of GH100's pipes: "FMAheavy pipe handles IMAD, IDP, and FP32
# operations"; Nsight Compute's of the FMA pipe: most FP32 arithmetic, FADD, FMUL, FMAD, and integer
# multiplication). ALU: the other integer instructions, logic, shifts, comparisons and selects, float ones included
# (Nsight Compute's ALU: bit manipulation, logic, integer instructions but IMAD and IMUL). FP64: on its own pipe.
# Moves (MOV) and control are left in "other": they issue, but the classes are what differ.
PIPES = {
    "fma": {"FADD", "FMUL", "FFMA", "HFMA2", "HADD2", "FCHK", "FRND", "IMAD", "IMUL", "IDP"},
    "fp64": {"DADD", "DMUL", "DFMA", "DSETP", "DMNMX"},
    "alu": {"IADD3", "IADD", "VIADD", "SEL", "LOP3", "ISETP", "LEA", "SHF", "PRMT", "IABS", "IMNMX", "VIMNMX", "BMSK",
            "SGXT", "POPC", "FLO", "BREV", "I2F", "F2I", "I2FP", "F2IP", "FSEL", "FSETP", "FMNMX"},
    "shuffle": {"SHFL"},
    "global": {"LDG", "STG", "ATOMG", "ATOM", "RED", "LD", "ST"},
    "shared": {"LDS", "STS", "ATOMS"},
}
# One instruction of a disassembly: its address, its opcode (after any predicate) and, for a branch, its target.
LINE = re.compile(r"^\s+/\*([0-9a-f]{4,})\*/\s+(?:@!?U?P[T0-9]+\s+)?([A-Z][A-Z0-9_]*)[^;]*?(?:\s(0x[0-9a-f]+))?\s*;")


def pipe_of(opcode: str) -> str:
    return next((pipe for pipe, ops in PIPES.items() if opcode in ops), "other")


def instructions(sass: str) -> list[tuple[int, str, str | None]]:
    """(address, opcode, branch target or None) of each instruction of one function's disassembly, in order."""
    return [(int(m[1], 16), m[2], m[3]) for line in sass.splitlines() if (m := LINE.match(line))]


def tally(opcodes) -> dict:
    """Opcodes and their totals by pipe."""
    ops = collections.Counter(opcodes)
    pipes = collections.Counter()
    for op, n in ops.items():
        pipes[pipe_of(op)] += n
    return {"instructions": sum(ops.values()), "pipes": dict(pipes), "opcodes": dict(ops.most_common())}


def count(sass: str) -> dict:
    """Opcodes of one function's disassembly, and their totals by pipe."""
    return tally(op for _, op, _ in instructions(sass))


def barrier_loops(sass: str) -> list[dict]:
    """The loops of one function that hold a barrier (a branch back to an address at or before it, its body from
    there to the branch holding a BAR), innermost first, each with its count. The matmul's slice loops: one for
    the tiles whose loads are checked, one for the others, inside the loop over tiles."""
    code = instructions(sass)
    addresses = [address for address, _, _ in code]
    out = []
    for end, (at, op, target) in enumerate(code):
        if op != "BRA" or target is None or int(target, 16) > at:
            continue
        body = tally(op for _, op, _ in code[bisect.bisect_left(addresses, int(target, 16)):end + 1])
        if body["opcodes"].get("BAR"):
            out.append({"from": target, "to": f"0x{at:x}", **body})
    return sorted(out, key=lambda loop: loop["instructions"])


def disassemble(source: str, function: str, arch: str, cuobjdump: str) -> str:
    from memtune.kernels.probe import nvcc_cubin

    with tempfile.TemporaryDirectory() as tmp:
        cubin = f"{tmp}/{function}.cubin"
        try:
            nvcc_cubin(source, arch, cubin, f"-DMEMTUNE_ONLY={function}")
        except RuntimeError as exc:
            raise SystemExit(f"sass_mix: {exc}") from None
        env = {**os.environ, "PATH": f"{Path(cuobjdump).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
        done = subprocess.run([cuobjdump, "-sass", "-fun", function, cubin], capture_output=True, text=True, env=env)
    if done.returncode or "Function" not in done.stdout:
        raise SystemExit(f"cuobjdump {function}: {(done.stderr.strip().splitlines() or ['no such function'])[-1]}")
    return done.stdout


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("functions", nargs="+")
    parser.add_argument("--source", default="shaped.cu", help="a file of kernels/")
    parser.add_argument("--arch", default="sm_90")
    parser.add_argument("--cuobjdump", default=shutil.which("cuobjdump"))
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    if not args.cuobjdump or not Path(args.cuobjdump).exists():
        print("sass_mix: no cuobjdump (put one on the PATH or name it with --cuobjdump)", file=sys.stderr)
        return 2
    if not (KERNELS / args.source).is_file():
        print(f"sass_mix: --source: no kernels/{args.source}", file=sys.stderr)
        return 2
    sass = {fn: disassemble(args.source, fn, args.arch, args.cuobjdump) for fn in args.functions}
    mix = {fn: {**count(text), "barrier_loops": barrier_loops(text)} for fn, text in sass.items()}
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "sass_mix.json").write_text(json.dumps({"source": args.source, "arch": args.arch, "functions": mix},
                                                  indent=1) + "\n")
    for fn, m in mix.items():
        print(fn, m["instructions"], " ".join(f"{p}={n}" for p, n in sorted(m["pipes"].items())))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
