"""Modules whose backward depends on what the analysis cannot know (here the
environment the code runs in): tests/test_backward_reach.py measures each with
the variable set and unset, and the static figure must hold for both or say it
does not know."""

import os

import torch
from torch import nn

SCALE = "SHAPELINT_TEST_SCALE" in os.environ


class ScaledOrNot(nn.Module):
    """`x * (self.gamma if SCALE else 1.0)`: a value the analysis holds as not known
    at all may be a parameter, and what it multiplies then requires grad."""

    def __init__(self):
        super().__init__()
        self.gamma = nn.Parameter(torch.ones(8))
        self.lin = nn.Linear(8, 8)

    def forward(self, x):
        y = (x * (self.gamma if SCALE else 1.0)).view_as(x)
        return self.lin(y)
