"""memtune.tuner — see README."""
