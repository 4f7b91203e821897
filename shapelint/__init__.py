"""shapelint: static checks and symbolic costs for einops shape strings in PyTorch code."""

__version__ = "0.1.0"
