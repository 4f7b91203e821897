"""torch.nn's recurrent layers (torch 2.13, torch/nn/modules/rnn.py), as the analysis
reads them: Python source it interprets as it interprets a project file, so that a
construction registers the Parameters torch registers (`weight_ih_l{k}{_reverse}`,
`weight_hh_...`, `bias_ih_...`, `bias_hh_...`, LSTM's `weight_hr_...` with proj_size),
and a user subclass inherits them. `flatten_parameters()` does no arithmetic (a
cuDNN copy on CUDA, nothing elsewhere).

Never imported (the analysis reads it; it imports nothing at run time). torch runs
the layers in `_VF.rnn_tanh` / `_VF.rnn_relu` / `_VF.gru` / `_VF.lstm` (C++); here
they are written out as torch's C++ decomposes them on CPU for RNN and GRU (per layer
and direction, a linear map of the whole sequence's input; per time step, one of the
hidden state, then the gates elementwise, in place where torch's cells are), which is
what torch's flop counter counts: an addmm per linear map. nn.LSTM runs a fused kernel the counter registers 0 for, and
that depends on the backend (mkldnn on CPU, cuDNN on CUDA): its cost is left unknown
(a call with no stub), its Parameters and the shapes it returns are exact.
Left out, with no effect on a figure or a shape: the reverse direction reads the
sequence from its end in torch and here from its start (the same steps, the same
shapes: a loop the analysis sums over a symbolic length stays one), PackedSequence
inputs (the analysis has no value for one), `_all_weights` (a
list of lists of names) and the weight initialisation.
"""

import torch
from torch import _VF
import torch.nn.functional as F
from torch.nn import Module, Parameter


class RNNBase(Module):
    def __init__(
        self,
        mode,
        input_size,
        hidden_size,
        num_layers=1,
        bias=True,
        batch_first=False,
        dropout=0.0,
        bidirectional=False,
        proj_size=0,
        device=None,
        dtype=None,
    ):
        factory_kwargs = {"device": device, "dtype": dtype}
        super().__init__()
        self.mode = mode
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.num_layers = num_layers
        self.bias = bias
        self.batch_first = batch_first
        self.dropout = float(dropout)
        self.bidirectional = bidirectional
        self.proj_size = proj_size
        num_directions = 2 if bidirectional else 1
        if proj_size < 0:
            raise ValueError("proj_size should be a positive integer or zero to disable projections")
        if proj_size >= hidden_size:
            raise ValueError("proj_size has to be smaller than hidden_size")
        if mode == "LSTM":
            gate_size = 4 * hidden_size
        elif mode == "GRU":
            gate_size = 3 * hidden_size
        elif mode == "RNN_TANH":
            gate_size = hidden_size
        elif mode == "RNN_RELU":
            gate_size = hidden_size
        else:
            raise ValueError("Unrecognized RNN mode: " + mode)

        self._flat_weights_names = []
        for layer in range(num_layers):
            for direction in range(num_directions):
                real_hidden_size = proj_size if proj_size > 0 else hidden_size
                layer_input_size = input_size if layer == 0 else real_hidden_size * num_directions
                w_ih = Parameter(torch.empty((gate_size, layer_input_size), **factory_kwargs))
                w_hh = Parameter(torch.empty((gate_size, real_hidden_size), **factory_kwargs))
                b_ih = Parameter(torch.empty(gate_size, **factory_kwargs))
                b_hh = Parameter(torch.empty(gate_size, **factory_kwargs))
                if self.proj_size == 0:
                    if bias:
                        layer_params = (w_ih, w_hh, b_ih, b_hh)
                    else:
                        layer_params = (w_ih, w_hh)
                else:
                    w_hr = Parameter(torch.empty((proj_size, hidden_size), **factory_kwargs))
                    if bias:
                        layer_params = (w_ih, w_hh, b_ih, b_hh, w_hr)
                    else:
                        layer_params = (w_ih, w_hh, w_hr)

                suffix = "_reverse" if direction == 1 else ""
                param_names = ["weight_ih_l{}{}", "weight_hh_l{}{}"]
                if bias:
                    param_names += ["bias_ih_l{}{}", "bias_hh_l{}{}"]
                if self.proj_size > 0:
                    param_names += ["weight_hr_l{}{}"]
                param_names = [x.format(layer, suffix) for x in param_names]

                for name, param in zip(param_names, layer_params):
                    setattr(self, name, param)
                self._flat_weights_names.extend(param_names)

    def flatten_parameters(self):
        """Packs the weights for cuDNN, in place, where they are on CUDA; elsewhere
        nothing. No FLOPs, no shape: nothing the analysis follows."""
        return None

    def _batched(self, input):
        """input as (seq, batch, feature), and whether it had a batch axis."""
        if input.dim() not in (2, 3):
            raise ValueError(f"RNN: Expected input to be 2D or 3D, got {input.dim()}D tensor instead")
        if input.size(-1) != self.input_size:
            raise RuntimeError(
                f"input.size(-1) must be equal to input_size. Expected {self.input_size}, got {input.size(-1)}"
            )
        is_batched = input.dim() == 3
        if not is_batched:
            return input.unsqueeze(1), False
        if self.batch_first:
            return input.transpose(0, 1), True
        return input, True

    def _hidden(self, input, hx, size, is_batched):
        """hx (or zeros) as (layers * directions, batch, size), checked as torch checks it."""
        num_directions = 2 if self.bidirectional else 1
        expected = (self.num_layers * num_directions, input.size(1), size)
        if hx is None:
            return torch.zeros(expected, dtype=input.dtype, device=input.device)
        if is_batched and hx.dim() != 3:
            raise RuntimeError(f"For batched 3-D input, hx should also be 3-D but got {hx.dim()}-D tensor")
        if not is_batched:
            if hx.dim() != 2:
                raise RuntimeError(f"For unbatched 2-D input, hx should also be 2-D but got {hx.dim()}-D tensor")
            hx = hx.unsqueeze(1)
        if hx.size() != expected:
            raise RuntimeError(f"Expected hidden size {expected}, got {list(hx.size())}")
        return hx

    def _unbatched(self, output, is_batched):
        if not is_batched:
            return output.squeeze(1)
        if self.batch_first:
            return output.transpose(0, 1)
        return output

    def _step(self, gi, h, w_hh, b_hh):
        """One time step from gi, the step's input projection, as torch's CPU cells
        compute it (aten/src/ATen/native/RNN.cpp: GRUCell, SimpleCell), in place
        where they are: what autograd saves is theirs, storage for storage."""
        gh = F.linear(h, w_hh, b_hh)
        if self.mode == "GRU":
            i_r, i_z, i_n = gi.chunk(3, 1)
            h_r, h_z, h_n = gh.chunk(3, 1)
            resetgate = h_r.add_(i_r).sigmoid_()
            inputgate = h_z.add_(i_z).sigmoid_()
            newgate = i_n.add(h_n.mul_(resetgate)).tanh_()
            return (h - newgate).mul_(inputgate).add_(newgate)
        if self.mode == "RNN_RELU":
            return torch.relu(gh.add_(gi))
        return torch.tanh(gh.add_(gi))

    def _forward(self, input, hx):
        """RNN's and GRU's forward: output and h_n."""
        input, is_batched = self._batched(input)
        hx = self._hidden(input, hx, self.hidden_size, is_batched)
        output, hidden = self._run(input, hx)
        output = self._unbatched(output, is_batched)
        if not is_batched:
            hidden = hidden.squeeze(1)
        return output, hidden

    def _layer_weights(self, layer, direction):
        """w_ih, w_hh, b_ih, b_hh of a layer and direction (the biases None without bias)."""
        suffix = "_reverse" if direction == 1 else ""
        w_ih = getattr(self, "weight_ih_l{}{}".format(layer, suffix))
        w_hh = getattr(self, "weight_hh_l{}{}".format(layer, suffix))
        b_ih = getattr(self, "bias_ih_l{}{}".format(layer, suffix)) if self.bias else None
        b_hh = getattr(self, "bias_hh_l{}{}".format(layer, suffix)) if self.bias else None
        return w_ih, w_hh, b_ih, b_hh

    def _run(self, input, hx):
        """RNN and GRU over (seq, batch, feature): output and h_n."""
        num_directions = 2 if self.bidirectional else 1
        seq_len = input.size(0)
        layer_input = input
        h_n = []
        for layer in range(self.num_layers):
            outs = []
            for direction in range(num_directions):
                w_ih, w_hh, b_ih, b_hh = self._layer_weights(layer, direction)
                h = hx[layer * num_directions + direction]
                # on CPU torch projects the whole sequence's input at once (FullLayer)
                gi = F.linear(layer_input, w_ih, b_ih)
                steps = []
                for t in range(seq_len):
                    h = self._step(gi[t], h, w_hh, b_hh)
                    steps.append(h)
                outs.append(torch.stack(steps, 0))
                h_n.append(h)
            layer_input = torch.cat(outs, 2) if num_directions == 2 else outs[0]
            if self.dropout > 0 and self.training and layer < self.num_layers - 1:
                layer_input = F.dropout(layer_input, self.dropout, True)
        return layer_input, torch.stack(h_n, 0)


class RNN(RNNBase):
    def __init__(
        self,
        input_size,
        hidden_size,
        num_layers=1,
        nonlinearity="tanh",
        bias=True,
        batch_first=False,
        dropout=0.0,
        bidirectional=False,
        device=None,
        dtype=None,
    ):
        self.nonlinearity = nonlinearity
        if nonlinearity == "tanh":
            mode = "RNN_TANH"
        elif nonlinearity == "relu":
            mode = "RNN_RELU"
        else:
            raise ValueError(f"Unknown nonlinearity '{nonlinearity}'. Select from 'tanh' or 'relu'.")
        super().__init__(
            mode, input_size, hidden_size, num_layers, bias, batch_first, dropout,
            bidirectional, device=device, dtype=dtype,
        )

    def forward(self, input, hx=None):
        return self._forward(input, hx)


class GRU(RNNBase):
    def __init__(self, *args, **kwargs):
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        super().__init__("GRU", *args, **kwargs)

    def forward(self, input, hx=None):
        return self._forward(input, hx)


class LSTM(RNNBase):
    def __init__(self, *args, **kwargs):
        super().__init__("LSTM", *args, **kwargs)

    def _run_lstm(self, input, hx, cx, fused):
        """LSTM over (seq, batch, feature): output, h_n and c_n; fused: by oneDNN's
        kernel per layer and direction, else by torch's default implementation."""
        num_directions = 2 if self.bidirectional else 1
        seq_len = input.size(0)
        layer_input = input
        h_n = []
        c_n = []
        for layer in range(self.num_layers):
            outs = []
            for direction in range(num_directions):
                w_ih, w_hh, b_ih, b_hh = self._layer_weights(layer, direction)
                w_hr = None
                if self.proj_size > 0:
                    w_hr = getattr(self, "weight_hr_l{}{}".format(layer, "_reverse" if direction == 1 else ""))
                h = hx[layer * num_directions + direction]
                c = cx[layer * num_directions + direction]
                if fused:
                    res = torch.mkldnn_rnn_layer(
                        layer_input, w_ih, w_hh, b_ih, b_hh, h, c, direction == 1, [], 2,
                        self.hidden_size, self.num_layers, self.bias, self.bidirectional,
                        False, self.training,
                    )
                    outs.append(res[0])
                    h_n.append(res[1])
                    c_n.append(res[2])
                    continue
                steps = []
                for t in range(seq_len):
                    # written in the loop, not in a helper: the loss may reach c and not
                    # the last step's projection (c_n returned alone), and a loop counted
                    # by one turn tells that apart for its own calls only
                    gates = F.linear(layer_input[t], w_ih, b_ih) + F.linear(h, w_hh, b_hh)
                    i, f, g, o = gates.chunk(4, 1)
                    c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
                    h = torch.sigmoid(o) * torch.tanh(c)
                    if w_hr is not None:
                        h = F.linear(h, w_hr)
                    steps.append(h)
                outs.append(torch.stack(steps, 0))
                h_n.append(h)
                c_n.append(c)
            layer_input = torch.cat(outs, 2) if num_directions == 2 else outs[0]
            if self.dropout > 0 and self.training and layer < self.num_layers - 1:
                layer_input = F.dropout(layer_input, self.dropout, True)
        return layer_input, torch.stack(h_n, 0), torch.stack(c_n, 0)

    def forward(self, input, hx=None):
        input, is_batched = self._batched(input)
        num_directions = 2 if self.bidirectional else 1
        real_hidden_size = self.proj_size if self.proj_size > 0 else self.hidden_size
        if hx is None:
            h_zeros = self._hidden(input, None, real_hidden_size, is_batched)
            c_zeros = self._hidden(input, None, self.hidden_size, is_batched)
        else:
            h_zeros = self._hidden(input, hx[0], real_hidden_size, is_batched)
            c_zeros = self._hidden(input, hx[1], self.hidden_size, is_batched)
        # The kernel torch picks on CPU (aten/src/ATen/native/RNN.cpp, lstm): oneDNN's
        # fused one for float32 without projections, which the flop counter counts 0
        # for, forward and backward; torch's default implementation, an addmm per
        # linear map and step, with proj_size or in float64 (input and weights share
        # a dtype, or torch refuses). For bfloat16 and float16 the choice depends on
        # the CPU: not known. (On CUDA cuDNN's fused kernel counts 0 in every form.)
        dtype = self.weight_ih_l0.dtype
        if self.proj_size > 0 or dtype == torch.float64:
            output, h_n, c_n = self._run_lstm(input, h_zeros, c_zeros, False)
        elif dtype == torch.float32:
            output, h_n, c_n = self._run_lstm(input, h_zeros, c_zeros, True)
        else:
            # no stub: its cost is not known
            _VF.lstm(input, (h_zeros, c_zeros), self._flat_weights_names, self.bias,
                     self.num_layers, self.dropout, self.training, self.bidirectional, False)
            output = input.new_empty(input.size(0), input.size(1), num_directions * real_hidden_size)
            h_n = h_zeros.new_empty(h_zeros.shape)
            c_n = c_zeros.new_empty(c_zeros.shape)
        output = self._unbatched(output, is_batched)
        if not is_batched:
            h_n = h_n.squeeze(1)
            c_n = c_n.squeeze(1)
        return output, (h_n, c_n)
