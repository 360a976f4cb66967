"""The ALU pipe's throughput (probe.cu's ``alu_shf``; #31): independent chains of funnel shifts at full occupancy,
in 10^9 lane instructions a second and in lanes a cycle an SM at the probed clock (the CUDA programming guide gives
64 for the 32-bit integer adds, logic and compares of compute capability 9.0; not a measurement). The shaped
kernels' 64-bit integer sums issue their adds and selects there (`bench/results/sass/shaped_sums/`). Medians of
five timed launches, written as JSON.

    python bench/alu_rate.py OUT.json
"""
import statistics

from common import probe_bench

probe, sms, clock, save = probe_bench(__doc__)
samples = probe.alu_rate(sms)
rate = statistics.median(samples)
lanes = rate / (sms * clock)
print(f"ALU: {rate:.0f} G lane instructions/s, {lanes:.1f} lanes a cycle an SM at {clock:.3f} GHz", flush=True)
save([{"giops": rate, "lanes_per_cycle_per_sm": lanes, "samples": samples}])
