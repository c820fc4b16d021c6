"""Elementwise math and special functions: inverse trigonometric, log2/log10, hypot, erf, gammaln, ...

May import: ``gradc.ir``, ``gradc.errors`` and the other op modules.
"""
