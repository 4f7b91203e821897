"""Napkin math: the formulas (training time, memory, rooflines), the hardware
table they read, and plots of them. No analysis, no click."""
