"""memtune.kernels — see README."""
