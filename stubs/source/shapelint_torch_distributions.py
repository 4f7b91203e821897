"""torch.distributions (torch 2.13, torch/distributions/), the classes a forward
commonly returns, as the analysis reads them: Python source it interprets as it
interprets a project file, so that building one runs the tensor ops torch's
constructor runs (broadcasting, a normalisation: 0 FLOPs in torch's counter) and a
user subclass of Distribution inherits its constructor.

Never imported (the analysis reads it; it imports nothing at run time). Left out:
argument validation (`validate_args`, on by default), whose checks are comparisons
torch's counter counts 0 for and whose ValueError depends on the data; lazily
computed attributes other than those listed (Categorical's `probs` given `logits`
and the reverse); the methods of these classes but those written here.
"""

import math

import torch


def broadcast_all(*values):
    """torch.distributions.utils.broadcast_all: numbers become tensors of the first
    tensor's dtype (the default dtype where none is one), then all broadcast. torch
    calls torch.broadcast_tensors, whose outputs are each an expand of its own
    operand: written so, since autograd sends a gradient back only to the operands
    of the outputs the loss reaches (the analysis links one op's outputs to all of
    its operands)."""
    dtype = torch.get_default_dtype()
    for v in values:
        if isinstance(v, torch.Tensor):
            dtype = v.dtype
            break
    new = [v if isinstance(v, torch.Tensor) else torch.tensor(v, dtype=dtype) for v in values]
    shape = torch.broadcast_tensors(*new)[0].shape  # the views alone: no data moves
    return [t.expand(shape) for t in new]


class Distribution:
    has_rsample = False
    has_enumerate_support = False

    def __init__(self, batch_shape=(), event_shape=(), validate_args=None):
        self._batch_shape = tuple(batch_shape)
        self._event_shape = tuple(event_shape)

    @property
    def batch_shape(self):
        return self._batch_shape

    @property
    def event_shape(self):
        return self._event_shape

    def _extended_shape(self, sample_shape=()):
        return tuple(sample_shape) + self._batch_shape + self._event_shape


class Normal(Distribution):
    has_rsample = True

    def __init__(self, loc, scale, validate_args=None):
        self.loc, self.scale = broadcast_all(loc, scale)
        if isinstance(loc, (int, float)) and isinstance(scale, (int, float)):
            batch_shape = ()
        else:
            batch_shape = self.loc.size()
        super().__init__(batch_shape, validate_args=validate_args)

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc

    @property
    def stddev(self):
        return self.scale

    @property
    def variance(self):
        return self.stddev.pow(2)

    def log_prob(self, value):
        var = self.scale**2
        log_scale = self.scale.log()
        return -((value - self.loc) ** 2) / (2 * var) - log_scale - math.log(math.sqrt(2 * math.pi))

    def entropy(self):
        return 0.5 + 0.5 * math.log(2 * math.pi) + torch.log(self.scale)


class Categorical(Distribution):
    has_enumerate_support = True

    def __init__(self, probs=None, logits=None, validate_args=None):
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        if probs is not None:
            if probs.dim() < 1:
                raise ValueError("`probs` parameter must be at least one-dimensional.")
            self.probs = probs / probs.sum(-1, keepdim=True)
            param = self.probs
        else:
            if logits.dim() < 1:
                raise ValueError("`logits` parameter must be at least one-dimensional.")
            self.logits = logits - logits.logsumexp(dim=-1, keepdim=True)
            param = self.logits
        self._param = param
        self._num_events = param.size()[-1]
        batch_shape = param.size()[:-1] if param.ndimension() > 1 else ()
        super().__init__(batch_shape, validate_args=validate_args)


class Independent(Distribution):
    def __init__(self, base_distribution, reinterpreted_batch_ndims, validate_args=None):
        if reinterpreted_batch_ndims > len(base_distribution.batch_shape):
            raise ValueError(
                "Expected reinterpreted_batch_ndims <= len(base_distribution.batch_shape), "
                f"actual {reinterpreted_batch_ndims} vs {len(base_distribution.batch_shape)}"
            )
        shape = tuple(base_distribution.batch_shape) + tuple(base_distribution.event_shape)
        event_dim = reinterpreted_batch_ndims + len(base_distribution.event_shape)
        batch_shape = shape[: len(shape) - event_dim]
        event_shape = shape[len(shape) - event_dim :]
        self.has_rsample = base_distribution.has_rsample
        self.base_dist = base_distribution
        self.reinterpreted_batch_ndims = reinterpreted_batch_ndims
        super().__init__(batch_shape, event_shape, validate_args=validate_args)

    @property
    def mean(self):
        return self.base_dist.mean

    @property
    def stddev(self):
        return self.base_dist.stddev


class Transform:
    """torch.distributions.transforms.Transform: its constructor (the cache it
    keeps) and its call (`_call` on x, through the one-entry cache where
    cache_size is 1). A subclass's own methods are read as written."""

    bijective = False

    def __init__(self, cache_size=0):
        self._cache_size = cache_size
        self._inv = None
        if cache_size == 0:
            pass
        elif cache_size == 1:
            self._cached_x_y = None, None
        else:
            raise ValueError("cache_size must be 0 or 1")

    def __call__(self, x):
        if self._cache_size == 0:
            return self._call(x)
        x_old, y_old = self._cached_x_y
        if x is x_old:
            return y_old
        y = self._call(x)
        self._cached_x_y = x, y
        return y
