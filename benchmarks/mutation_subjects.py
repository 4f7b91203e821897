"""The corpus modules the mutation harness edits (issue 25): each self-contained,
built with small constructor arguments whose sizes all differ (so that a wrong width
cannot pass by coincidence), and run on one input."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Subject:
    name: str
    package: str  # a directory of /work/corpus
    file: str  # relative to it
    cls: str
    init: dict[str, str]  # NAME -> Python expression, as `--init NAME=VALUE`
    inputs: dict[
        str, tuple[tuple[int, ...], int | None]
    ]  # PARAM -> (shape, token-id bound or None)
    dims: dict[str, int] = field(default_factory=dict)  # extra `check --dim` bindings

    @property
    def module(self) -> str:
        return self.file.removesuffix(".py").replace("/", ".").removesuffix(".__init__")

    def init_args(self) -> list[str]:
        return [f"{k}={v}" for k, v in self.init.items()]

    def input_args(self) -> list[str]:
        return [
            f"{p}={','.join(map(str, shape))}{'' if high is None else ':int'}"
            for p, (shape, high) in self.inputs.items()
        ]

    def dim_args(self) -> str:
        """`check --dim`: the int constructor arguments, by their names, and extras."""
        dims = {k: int(v) for k, v in self.init.items() if v.lstrip("-").isdigit()}
        dims.update(self.dims)
        return ",".join(f"{k}={v}" for k, v in dims.items())


VIT = "vit-pytorch-1.26.14"
# A ViT at sizes that all differ: dim 48, 4 heads of 16 (inner 64), MLP 96, 16 patches
# of 8x8x3 = 192 values.
_VIT = {
    "image_size": "32",
    "patch_size": "8",
    "num_classes": "10",
    "dim": "48",
    "depth": "1",
    "heads": "4",
    "mlp_dim": "96",
    "dim_head": "16",
}
_IMG = {"img": ((2, 3, 32, 32), None)}

SUBJECTS = [
    Subject("vit", VIT, "vit_pytorch/vit.py", "ViT", _VIT, _IMG),
    Subject("simple_vit", VIT, "vit_pytorch/simple_vit.py", "SimpleViT", _VIT, _IMG),
    Subject("cait", VIT, "vit_pytorch/cait.py", "CaiT", {**_VIT, "cls_depth": "1"}, _IMG),
    Subject("deepvit", VIT, "vit_pytorch/deepvit.py", "DeepViT", _VIT, _IMG),
    Subject("parallel_vit", VIT, "vit_pytorch/parallel_vit.py", "ViT", _VIT, _IMG),
    Subject(
        "vit_registers",
        VIT,
        "vit_pytorch/simple_vit_with_register_tokens.py",
        "SimpleViT",
        _VIT,
        _IMG,
    ),
    Subject(
        "vit_1d",
        VIT,
        "vit_pytorch/vit_1d.py",
        "ViT",
        {
            **{k: v for k, v in _VIT.items() if k not in ("image_size", "patch_size")},
            "seq_len": "64",
            "patch_size": "8",
        },
        {"series": ((2, 3, 64), None)},
    ),
    Subject(
        "vit_3d",
        VIT,
        "vit_pytorch/vit_3d.py",
        "ViT",
        {
            **{k: v for k, v in _VIT.items() if k != "patch_size"},
            "image_patch_size": "8",
            "frames": "4",
            "frame_patch_size": "2",
        },
        {"video": ((2, 3, 4, 32, 32), None)},
    ),
    Subject("pit", VIT, "vit_pytorch/pit.py", "PiT", {**_VIT, "depth": "(1, 1)"}, _IMG),
    Subject(
        "nest",
        VIT,
        "vit_pytorch/nest.py",
        "NesT",
        {
            "image_size": "32",
            "patch_size": "4",
            "num_classes": "10",
            "dim": "24",
            "heads": "3",
            "num_hierarchies": "2",
            "block_repeats": "(1, 1)",
            "dim_head": "16",
        },
        _IMG,
    ),
    Subject(
        "perceiver",
        "perceiver-pytorch-0.11.0",
        "perceiver_pytorch/perceiver_pytorch.py",
        "Perceiver",
        {
            "input_channels": "3",
            "input_axis": "2",
            "num_freq_bands": "4",
            "max_freq": "10.0",
            "depth": "1",
            "num_latents": "12",
            "latent_dim": "40",
            "cross_heads": "1",
            "latent_heads": "4",
            "cross_dim_head": "24",
            "latent_dim_head": "16",
            "num_classes": "10",
        },
        {"data": ((2, 8, 8, 3), None)},
    ),
    Subject(
        "timm_attention",
        "timm-1.0.31",
        "timm/layers/attention.py",
        "Attention",
        {"dim": "48", "num_heads": "4"},
        {"x": ((2, 10, 48), None)},
    ),
    Subject(
        "timm_glu_mlp",
        "timm-1.0.31",
        "timm/layers/mlp.py",
        "SwiGLU",
        {"in_features": "48", "hidden_features": "96", "out_features": "40"},
        {"x": ((2, 10, 48), None)},
    ),
    Subject(
        "ddpm_resnet",
        "denoising-diffusion-pytorch-2.3.4",
        "denoising_diffusion_pytorch/denoising_diffusion_pytorch.py",
        "ResnetBlock",
        {"dim": "16", "dim_out": "24", "time_emb_dim": "20"},
        {"x": ((2, 16, 8, 8), None), "time_emb": ((2, 20), None)},
    ),
    Subject(
        "ddpm_linear_attention",
        "denoising-diffusion-pytorch-2.3.4",
        "denoising_diffusion_pytorch/denoising_diffusion_pytorch.py",
        "LinearAttention",
        {"dim": "24", "heads": "2", "dim_head": "16"},
        {"x": ((2, 24, 8, 8), None)},
    ),
    Subject(
        "ddpm_unet",
        "denoising-diffusion-pytorch-2.3.4",
        "denoising_diffusion_pytorch/denoising_diffusion_pytorch.py",
        "Unet",
        {"dim": "16", "dim_mults": "(1, 2)", "attn_dim_head": "8", "attn_heads": "2"},
        {"x": ((2, 3, 16, 16), None), "time": ((2,), None)},
    ),
    Subject(
        "open_clip_block",
        "open-clip-torch-3.3.0",
        "open_clip/transformer.py",
        "ResidualAttentionBlock",
        {"d_model": "48", "n_head": "4", "mlp_ratio": "2.0"},
        {"q_x": ((10, 2, 48), None)},
    ),
    Subject(
        "cct",
        VIT,
        "vit_pytorch/cct.py",
        "CCT",
        {
            "img_size": "32",
            "embedding_dim": "48",
            "n_conv_layers": "1",
            "kernel_size": "3",
            "stride": "1",
            "padding": "1",
            "num_layers": "1",
            "num_heads": "4",
            "mlp_ratio": "2.0",
            "num_classes": "10",
            "positional_embedding": "'learnable'",
        },
        {"x": ((2, 3, 32, 32), None)},
    ),
    Subject(
        "mobile_vit",
        VIT,
        "vit_pytorch/mobile_vit.py",
        "MobileViT",
        {
            "image_size": "(64, 64)",
            "dims": "[48, 60, 72]",
            "channels": "[16, 16, 24, 24, 32, 32, 40, 40, 48, 48, 96]",
            "num_classes": "10",
        },
        {"x": ((2, 3, 64, 64), None)},
    ),
    Subject(
        "levit",
        VIT,
        "vit_pytorch/levit.py",
        "LeViT",
        {
            "image_size": "64",
            "num_classes": "10",
            "stages": "2",
            "dim": "(32, 48)",
            "depth": "1",
            "heads": "(2, 4)",
            "mlp_mult": "2",
        },
        {"img": ((2, 3, 64, 64), None)},
    ),
    Subject(
        "max_vit",
        VIT,
        "vit_pytorch/max_vit.py",
        "MaxViT",
        {
            "num_classes": "10",
            "dim": "24",
            "depth": "(1, 1)",
            "dim_head": "8",
            "window_size": "4",
            "dim_conv_stem": "16",
        },
        {"x": ((2, 3, 32, 32), None)},
    ),
    Subject(
        "t2t",
        VIT,
        "vit_pytorch/t2t.py",
        "T2TViT",
        {
            "image_size": "32",
            "num_classes": "10",
            "dim": "48",
            "depth": "1",
            "heads": "4",
            "mlp_dim": "96",
            "dim_head": "16",
            "t2t_layers": "((7, 4), (3, 2))",
        },
        _IMG,
    ),
    Subject(
        "cross_vit",
        VIT,
        "vit_pytorch/cross_vit.py",
        "CrossViT",
        {
            "image_size": "32",
            "num_classes": "10",
            "sm_dim": "48",
            "lg_dim": "64",
            "sm_patch_size": "8",
            "lg_patch_size": "16",
            "sm_enc_depth": "1",
            "sm_enc_heads": "4",
            "sm_enc_mlp_dim": "96",
            "sm_enc_dim_head": "16",
            "lg_enc_depth": "1",
            "lg_enc_heads": "2",
            "lg_enc_mlp_dim": "80",
            "lg_enc_dim_head": "24",
            "cross_attn_depth": "1",
            "cross_attn_heads": "2",
            "cross_attn_dim_head": "20",
            "depth": "1",
        },
        _IMG,
    ),
    Subject(
        "perceiver_io",
        "perceiver-pytorch-0.11.0",
        "perceiver_pytorch/perceiver_io.py",
        "PerceiverIO",
        {
            "depth": "1",
            "dim": "24",
            "queries_dim": "20",
            "logits_dim": "10",
            "num_latents": "12",
            "latent_dim": "40",
            "latent_heads": "4",
            "cross_dim_head": "16",
            "latent_dim_head": "8",
        },
        {"data": ((2, 16, 24), None), "queries": ((2, 5, 20), None)},
    ),
]
