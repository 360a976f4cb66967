"""memtune.studies — see README."""
