# The version of the integration package ascend-ops (compat and demo).
__version__ = "0.1.0"
