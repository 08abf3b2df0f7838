"""Computational kernels: readable numpy oracles beside fast numba versions."""
