"""The seeds' algorithms, one module per source chapter; each module lists its registry entries in
``ENTRIES`` (:mod:`memtune.costmodel.registry` collects them, in this order)."""
from . import conv_matmul, dmm_permutation, hmm_permutation, memory_access, rap, sat, scan

MODULES = (memory_access, scan, dmm_permutation, hmm_permutation, sat, conv_matmul, rap)
