"""transformers' LlamaModel, MistralModel, GPT2Model and BertModel with their
configs, end to end: read from transformers' source (installed on the path, or
the corpus copy), never imported by the analysis. Judged by FlopCounterMode
where transformers can be imported to run them; skipped where its source is
nowhere (where the corpus is not fetched, as corpus_path says). Where each stands is in benchmarks/README.md."""

from __future__ import annotations

from pathlib import Path

import pytest

from shapelint.analysis.driver import analyze_target
from shapelint.analysis.installed import find_module, search_path
from shapelint.analysis.target import TargetError, target_json
from tests.helpers import corpus_package

SMALL = "hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=4"
MODELS = {
    "LlamaModel": ("llama", f"LlamaConfig({SMALL}, num_key_value_heads=2, vocab_size=100)"),
    "MistralModel": ("mistral", f"MistralConfig({SMALL}, num_key_value_heads=2, vocab_size=100)"),
    "GPT2Model": (
        "gpt2",
        "GPT2Config(n_embd=64, n_layer=2, n_head=4, vocab_size=100, n_positions=32)",
    ),
    "BertModel": ("bert", f"BertConfig({SMALL}, vocab_size=100, max_position_embeddings=32)"),
}
BATCH, SEQ = 2, 16


def _source(family: str) -> Path:
    """transformers' file on the path, else the corpus copy (skipped, as every
    corpus test, where the corpus is not fetched)."""
    mod = f"transformers.models.{family}.modeling_{family}"
    found = find_module(mod, search_path())
    if found is not None:
        return Path(found[1])
    return (
        corpus_package("transformers")
        / "transformers"
        / "models"
        / family
        / f"modeling_{family}.py"
    )


def _static(name: str, options=None) -> dict:
    family, config = MODELS[name]
    path = _source(family)
    text = path.read_text()
    try:
        res = analyze_target(
            str(path), text, name, {"config": config}, {"input_ids": f"{BATCH},{SEQ}:int"}, options
        )
    except TargetError as e:
        pytest.fail(f"the target was refused: {e}")
    return target_json(res, {})


def _truth(name: str) -> int:
    transformers = pytest.importorskip(
        "transformers", reason="transformers is not importable: no oracle"
    )
    import torch
    from torch.nn.attention import SDPBackend, sdpa_kernel
    from torch.utils.flop_counter import FlopCounterMode

    _, config = MODELS[name]
    config_class = config.split("(")[0]  # transformers' names load lazily: fetch it by name
    built = eval(config, {config_class: getattr(transformers, config_class)})  # noqa: S307 - our own literal
    model = getattr(transformers, name)(built)
    # SDPA on its math backend, as the modules differential runs it: torch's CPU kernel
    # registers 0 FLOPs, its CUDA kernels and the math backend the products
    # (report/conventions.py), which shapelint counts
    with sdpa_kernel(SDPBackend.MATH), FlopCounterMode(display=False) as counter:
        model(torch.randint(0, 100, (BATCH, SEQ)))
    return counter.get_total_flops()


@pytest.mark.parametrize("name", sorted(MODELS))
def test_never_a_wrong_figure(name):
    """Exact or honestly incomplete: a complete figure equals FlopCounterMode's, and
    a lower bound that is a number is not above it."""
    tj = _static(name)
    if not tj["complete"] and not str(tj["flops"] or "").isdigit():
        assert tj["unknown"], "an incomplete total must name the calls it misses"
        return
    truth = _truth(name)
    if tj["complete"]:
        assert tj["flops_value"] == truth
    else:
        assert int(tj["flops"]) <= truth


MISSPELT = {
    "LlamaModel": ("hiden_size", "hidden_size"),
    "MistralModel": ("num_hiden_layers", "num_hidden_layers"),
    "GPT2Model": ("n_layers", "n_layer"),
    "BertModel": ("vocab_sise", "vocab_size"),
}


@pytest.mark.parametrize("name", sorted(MODELS))
def test_a_misspelt_config_field_is_an_error(name):
    """transformers' configs take **kwargs and keep an unknown keyword as an
    attribute nothing reads: the model Python builds is the default one, silently.
    A target refuses it (exit 2 on the command line), naming the field and the one
    meant."""
    family, config = MODELS[name]
    wrong, meant = MISSPELT[name]
    path = _source(family)
    assert f"{meant}=" in config
    bad = config.replace(f"{meant}=", f"{wrong}=")
    with pytest.raises(TargetError) as e:
        analyze_target(
            str(path), path.read_text(), name, {"config": bad}, {"input_ids": f"{BATCH},{SEQ}:int"}
        )
    assert f"unexpected keyword argument {wrong!r} (did you mean {meant!r}?)" in str(e.value)


# Not exact yet (benchmarks/README.md, sessions 25 hf6, 26 hf7, 27 hf8 and 28 hf9): BertModel is.
# A config the run built is judged by the bindings it can have (absence.built_config_lacks)
# and its plain methods run, so DynamicCache's `config.get_text_config(decoder=True)` now
# returns the config itself (`hasattr(self, "decoder")` False). GPT2 then stops at
# get_layer_types_and_kwargs: `getattr(config, "layer_types", None)` is not known
# (get_mtp_config stores `text_config.layer_types` into a copy: a mention), then
# `config.per_layer_config`, a property returning a `_PerLayerConfigView` iterated, so the
# cache's layers (`DYNAMIC_LAYER_TYPE_MAPPING[layer_type]`) and the sizes after them are
# not known. Llama and Mistral: the config being built is judged too
# (absence.config_being_built), so `getattr(self, "rope_theta", default)` and
# `partial_rotary_factor` in convert_rope_params_to_dict take their defaults; they stop
# at `rope_parameters.setdefault(...)` on the loop variable over
# `[self.rope_parameters]`: a dict changed in place through a local name, whose every
# other holder the analysis forgets (in_place.forget_held: it holds values, not a heap),
# so rope_parameters, rope_init_fn / nn.Buffer, the mask functions and the cache's
# layers after them are not known.
_NOT_EXACT = pytest.mark.xfail(
    strict=True,
    reason="GPT2: the cache's layer types (getattr(config, 'layer_types', None), "
    "config.per_layer_config iterated); Llama/Mistral: rope_parameters.setdefault on the loop "
    "variable over [self.rope_parameters] forgets the config's dict, then rope_init_fn / "
    "nn.Buffer, the mask functions, the cache's layer types",
)


@pytest.mark.parametrize(
    "name", [n if n == "BertModel" else pytest.param(n, marks=_NOT_EXACT) for n in sorted(MODELS)]
)
def test_exact(name):
    # exact only where transformers' own imports (huggingface_hub and the rest) can be
    # read too, as where it is installed: the corpus copy alone leaves their names unknown
    pytest.importorskip("transformers", reason="transformers is not importable: no oracle")
    # exactness, not speed: a model of transformers takes about 8 s of CPU, past the
    # 10 s wall-clock budget of a target on a loaded machine, where it is incomplete
    tj = _static(name, {"time_budget": 600})
    assert tj["complete"], [u["op"] for u in tj["unknown"]]
    assert tj["flops_value"] == _truth(name)
