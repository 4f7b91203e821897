"""The benchmark corpus: pinned PyPI releases that use einops and torch heavily.

    python benchmarks/corpus.py [DEST]      # default: $SHAPELINT_CORPUS or benchmarks/corpus/
    python benchmarks/corpus.py --annotated [DEST]   # the jaxtyping-annotated packages
    python benchmarks/corpus.py --holdout DEST       # released models outside the corpus
    python benchmarks/corpus.py --holdout-b DEST     # a second holdout (session 13)
    python benchmarks/corpus.py --holdout-c DEST     # a third holdout (session 14)
    python benchmarks/corpus.py --holdout-d DEST     # a fourth holdout (session 15)
    python benchmarks/corpus.py --holdout-e DEST     # a fifth holdout (session 16)
    python benchmarks/corpus.py --holdout-f DEST     # a sixth holdout (session 17)
    python benchmarks/corpus.py --holdout-g DEST     # a seventh holdout (session 18)
    python benchmarks/corpus.py --holdout-h DEST     # an eighth holdout (session 19)
    python benchmarks/corpus.py --holdout-i DEST     # a ninth holdout (session 20)
    python benchmarks/corpus.py --holdout-j DEST     # a tenth holdout (session 21)
    python benchmarks/corpus.py --holdout-k DEST     # an eleventh holdout (session 22)
    python benchmarks/corpus.py --holdout-l DEST     # a twelfth holdout (session 23)
    python benchmarks/corpus.py --holdout-m DEST     # a thirteenth holdout (session 24)
    python benchmarks/corpus.py --holdout-n DEST     # a fourteenth holdout (session 25)
    python benchmarks/corpus.py --holdout-o DEST     # a fifteenth holdout (session 26)
    python benchmarks/corpus.py --holdout-p DEST     # a sixteenth holdout (session 27)
    python benchmarks/corpus.py --holdout-q DEST     # a seventeenth holdout (session 28)
    python benchmarks/corpus.py --holdout-r DEST     # an eighteenth holdout (session 29)

The annotated packages (issue 16: inferred einops output shapes in annotated
code) are a separate list, fetched only with --annotated, so that every
measurement over PACKAGES keeps its meaning.

Each release is fetched with `pip download --no-deps NAME==VERSION`, unpacked
(wheel or sdist), and only its .py files are kept, under DEST/NAME-VERSION/.
A package already unpacked is skipped, so the script can be re-run after a
failure. Nothing here is imported by shapelint itself.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from pathlib import Path

# Pinned so that timings compare across runs; about 2.5M lines of Python in all.
PACKAGES: tuple[tuple[str, str], ...] = (
    ("x-transformers", "2.31.10"),
    ("vit-pytorch", "1.26.14"),
    ("timm", "1.0.31"),
    ("transformers", "5.24.0"),
    ("diffusers", "0.42.1"),
    ("denoising-diffusion-pytorch", "2.3.4"),
    ("imagen-pytorch", "2.1.0"),
    ("dalle2-pytorch", "1.15.6"),
    ("perceiver-pytorch", "0.11.0"),
    ("performer-pytorch", "1.1.4"),
    ("mamba-ssm", "2.3.2.post1"),
    ("einops-exts", "0.0.4"),
    ("lightning", "2.6.6"),
    ("torchvision", "0.29.1"),
    ("open-clip-torch", "3.3.0"),
    ("peft", "0.21.2"),
    ("accelerate", "1.15.0"),
    ("mmengine", "0.10.7"),
    ("vector-quantize-pytorch", "1.32.0"),
    ("audiolm-pytorch", "2.4.0"),
    ("rotary-embedding-torch", "0.9.1"),
    ("local-attention", "1.11.2"),
    ("meshgpt-pytorch", "1.8.1"),
    ("lion-pytorch", "0.2.5"),
    ("enformer-pytorch", "0.8.12"),
    ("alphafold3-pytorch", "0.8.3"),
)

# jaxtyping-annotated packages (alphafold3-pytorch, annotated too, is in PACKAGES).
ANNOTATED: tuple[tuple[str, str], ...] = (
    ("chai-lab", "0.6.1"),
    ("transformer-lens", "4.3.0"),
    ("transfusion-pytorch", "0.20.0"),
    ("e2-tts-pytorch", "2.2.2"),
)

# Released model code nobody here developed against (issue 24: judge progress on
# code you did not write): the modules differential runs over it with
# `--corpus DEST --truth benchmarks/holdout_truth.json` (benchmarks/README.md).
HOLDOUT: tuple[tuple[str, str], ...] = (
    ("segment-anything", "1.0"),
    ("openai-whisper", "20250625"),
    ("efficientnet-pytorch", "0.7.1"),
    ("pretrainedmodels", "0.7.4"),
    ("lpips", "0.1.4"),
    ("monai", "1.6.1"),
    ("rwkv", "0.8.32"),
    ("pytorch-tabnet", "4.1.0"),
    ("linformer", "0.2.3"),
    ("x-clip", "0.14.4"),
)

# A second holdout, fetched once session 12's was worked on (its modules were read
# while fixing what they showed): code nobody here had read when it was measured.
HOLDOUT_B: tuple[tuple[str, str], ...] = (
    ("pytorchcv", "0.0.74"),
    ("geffnet", "1.0.2"),
    ("segmentation-models-pytorch", "0.6.0"),
    ("conformer", "0.3.2"),
    ("mlp-mixer-pytorch", "0.3.1"),
    ("g-mlp-pytorch", "0.1.5"),
    ("soft-moe-pytorch", "0.1.9"),
    ("tab-transformer-pytorch", "0.6.1"),
    ("reformer-pytorch", "1.4.4"),
    ("mambapy", "1.2.0"),
    ("CoCa-pytorch", "0.1.0"),
)

# A third, fetched once the second was worked on: vision backbones, audio filterbanks
# and resampling, graph nets, tabular nets, continuous-time and minimal RNNs, and
# attention variants (Nystrom, axial, linear, halo, bottleneck), read by nobody here
# before its first measure.
HOLDOUT_C: tuple[tuple[str, str], ...] = (
    ("nystrom-attention", "0.0.14"),
    ("axial-attention", "0.6.1"),
    ("resnest", "0.0.5"),
    ("egnn-pytorch", "0.2.8"),
    ("ncps", "1.0.1"),
    ("julius", "0.2.8"),
    ("rtdl", "0.0.13"),
    ("linear-attention-transformer", "0.19.1"),
    ("minGRU-pytorch", "0.2.1"),
    ("bottleneck-transformer-pytorch", "0.1.4"),
    ("halonet-pytorch", "0.0.5"),
    ("graph-transformer-pytorch", "0.1.1"),
    ("asteroid-filterbanks", "0.4.0"),
    ("video-diffusion-pytorch", "0.7.0"),
)

# A fourth, fetched once the third was worked on: what users write beside the model
# zoos: vision augmentation and deformable attention (kornia), a diffusion U-Net,
# band-split source separation, temporal convolutions, RL policies (stable-baselines3),
# graph layers (torch-geometric, equivariant transformers), tabular number embeddings,
# implicit networks, point clouds, slot attention and byte-level transformers, read by
# nobody here before its first measure.
HOLDOUT_D: tuple[tuple[str, str], ...] = (
    ("kornia", "0.9.0"),
    ("deformable-attention", "0.0.20"),
    ("lambda-networks", "0.4.0"),
    ("x-unet", "0.5.0"),
    ("bs-roformer", "1.2.4"),
    ("pytorch-tcn", "1.2.3"),
    ("stable-baselines3", "2.9.2"),
    ("torch-geometric", "2.8.1"),
    ("en-transformer", "1.6.6"),
    ("rtdl-num-embeddings", "0.0.12"),
    ("siren-pytorch", "0.1.7"),
    ("point-transformer-pytorch", "0.1.5"),
    ("slot-attention", "1.5.2"),
    ("megabyte-pytorch", "0.3.6"),
    ("flash-pytorch", "0.1.9"),
)

# A fifth, fetched once the fourth was worked on: segmentation and video transformers,
# autoregressive and hourglass language models, protein structure attention, a U-shaped
# image restorer, gated recurrent cells, long-short attention, positional encodings,
# spectrogram front ends, SSIM, normalizing flows, music source separation and wavelet
# transforms, read by nobody here before its first measure.
HOLDOUT_E: tuple[tuple[str, str], ...] = (
    ("segformer-pytorch", "0.0.6"),
    ("timesformer-pytorch", "0.4.1"),
    ("perceiver-ar-pytorch", "0.0.10"),
    ("hourglass-transformer-pytorch", "0.0.6"),
    ("invariant-point-attention", "0.2.2"),
    ("uformer-pytorch", "0.0.8"),
    ("mogrifier", "0.0.5"),
    ("long-short-transformer", "0.0.5"),
    ("res-mlp-pytorch", "0.0.6"),
    ("positional-encodings", "6.0.3"),
    ("torchlibrosa", "0.1.0"),
    ("pytorch-msssim", "1.0.0"),
    ("zuko", "1.6.0"),
    ("demucs", "4.1.0"),
    ("pytorch-wavelets", "1.3.0"),
)

# A sixth, fetched once the fifth was worked on, mostly by authors other than lucidrains:
# face detection and recognition, anti-aliased backbones, image quality metrics, a neural
# audio codec and a vocoder, spectrogram layers, a pitch tracker, normalizing flows,
# spiking networks, low-rank adapters, a CRF, E(3)-equivariant layers, an audio diffusion
# U-Net, memory-efficient attention and RL policies, read by nobody here before its
# first measure.
HOLDOUT_F: tuple[tuple[str, str], ...] = (
    ("facenet-pytorch", "2.6.0"),
    ("antialiased-cnns", "0.3"),
    ("piq", "0.8.0"),
    ("encodec", "0.1.1"),
    ("vocos", "0.1.0"),
    ("nnaudio", "0.3.4"),
    ("torchcrepe", "0.0.24"),
    ("nflows", "0.14"),
    ("snntorch", "1.0.0"),
    ("loralib", "0.1.2"),
    ("pytorch-crf", "0.7.2"),
    ("e3nn", "0.6.0"),
    ("audio-diffusion-pytorch", "0.1.3"),
    ("memory-efficient-attention-pytorch", "0.1.6"),
    ("pfrl", "0.4.0"),
)

# A seventh, fetched once the sixth was worked on, all but one by authors other than
# lucidrains: super-resolution networks, 1D/2D/3D U-Nets, nnU-Net's medical
# architectures, a multi-scale audio codec, Karras diffusion models, extended LSTMs,
# Microsoft's RetNet/LongNet, RL networks, atomistic potentials, a pitch estimator,
# Kolmogorov-Arnold networks, time-series forecasters and a self-supervised learner,
# read by nobody here before its first measure.
HOLDOUT_G: tuple[tuple[str, str], ...] = (
    ("torchsr", "1.0.4"),
    ("unet", "0.8.1"),
    ("dynamic-network-architectures", "0.4.4"),
    ("snac", "1.2.1"),
    ("k-diffusion", "0.1.1.post1"),
    ("xlstm", "2.0.6"),
    ("torchscale", "0.3.0"),
    ("tianshou", "2.0.1"),
    ("torchani", "2.9.0"),
    ("pesto-pitch", "2.0.1"),
    ("pykan", "0.2.8"),
    ("torch-timeseries", "0.2.5"),
    ("byol-pytorch", "0.9.1"),
)

# An eighth, fetched once the seventh was worked on, all but one by authors other than
# lucidrains: a hierarchical vision transformer, EfficientDet detection heads, music
# source separation, a speech toolkit (speaker embeddings, ASR encoders, enhancement),
# click-through-rate recommender layers, normalizing flows, video backbones, a
# conditional GAN, a sparsely-gated mixture of experts, a BERT encoder,
# learned image compression and neural differential equations, read by nobody here
# before its first measure.
HOLDOUT_H: tuple[tuple[str, str], ...] = (
    ("hiera-transformer", "0.1.4"),
    ("effdet", "0.4.1"),
    ("openunmix", "1.3.0"),
    ("speechbrain", "1.1.2"),
    ("deepctr-torch", "0.3.0"),
    ("normflows", "1.7.3"),
    ("pytorchvideo", "0.1.5"),
    ("pytorch-pretrained-biggan", "0.1.1"),
    ("mixture-of-experts", "0.2.3"),
    ("bert-pytorch", "0.0.1a4"),
    ("compressai", "1.2.8"),
    ("torchdyn", "1.0.6"),
)

# A ninth, fetched once the eighth was worked on, all but one by authors other than
# lucidrains: a collection of super-resolution and restoration networks, a protein
# language model, an inverted time-series transformer, audio losses, differentiable
# speech signal processing, tabular deep learning, sentence embedding and retrieval
# heads, OCR (text detection and recognition), ControlNet's annotators (pose, depth,
# edges), RL actor-critics, point clouds, neural operators, time-series forecasters
# and audio source separation, read by nobody here before its first measure.
HOLDOUT_I: tuple[tuple[str, str], ...] = (
    ("spandrel", "0.4.2"),
    ("fair-esm", "2.0.0"),
    ("itransformer", "0.8.1"),
    ("auraloss", "0.4.0"),
    ("diffsptk", "4.0.1"),
    ("pytorch-frame", "0.3.0"),
    ("sentence-transformers", "6.2.0"),
    ("easyocr", "1.7.2"),
    ("controlnet-aux", "0.0.10"),
    ("rsl-rl-lib", "2.3.3"),
    ("pointnet", "0.1.1"),
    ("neuraloperator", "2.0.0"),
    ("pytorch-forecasting", "1.8.0"),
    ("asteroid", "0.7.0"),
)

# A tenth, fetched once the ninth was worked on, none by lucidrains: LLM builders (a
# from-scratch GPT family, a fine-tuning library's model builders), time-series forecasters
# (neural, probabilistic, a pretrained one), a neural audio codec, YOLO detectors, wavelet
# scattering, self-supervised vision heads, metric learning, tabular and wide-and-deep
# models, a tabular foundation model and EEG decoders, read by nobody here before its first
# measure.
HOLDOUT_J: tuple[tuple[str, str], ...] = (
    ("litgpt", "0.5.13"),
    ("torchtune", "0.6.1"),
    ("neuralforecast", "3.3.0"),
    ("descript-audio-codec", "1.0.0"),
    ("ultralytics", "8.4.190"),
    ("kymatio", "0.3.0"),
    ("lightly", "1.6.0"),
    ("pytorch-metric-learning", "2.9.0"),
    ("pytorch-widedeep", "1.7.0"),
    ("braindecode", "1.8.1"),
    ("pytorch-tabular", "1.2.0"),
    ("tabpfn", "9.2.0"),
    ("chronos-forecasting", "2.3.2"),
    ("gluonts", "0.17.0"),
)

# An eleventh holdout, fetched once session 21's was worked on: segmentation encoders and
# decoders, neural vocoders, partially-observed time series, person re-identification networks, two
# reinforcement learning libraries, two recommender libraries, Stanford's NLP pipeline and
# older NLP utilities, point-cloud networks, atomistic networks (invariant and equivariant)
# and Gaussian processes, read by nobody here before its first measure.
HOLDOUT_K: tuple[tuple[str, str], ...] = (
    ("pytorch-toolbelt", "0.8.0"),
    ("parallel-wavegan", "0.6.1"),
    ("pypots", "1.5"),
    ("torchreid", "0.2.5"),
    ("sb3-contrib", "2.9.2"),
    ("skrl", "2.1.1"),
    ("torch-rechub", "0.9.0"),
    ("torchfm", "0.7.0"),
    ("stanza", "1.15.0"),
    ("pytorch-nlp", "0.5.0"),
    ("learning3d", "0.2.2"),
    ("schnetpack", "2.1.1"),
    ("mace-torch", "0.3.16"),
    ("gpytorch", "1.15.2"),
)

# A twelfth holdout, fetched once session 22's was worked on: document OCR, chest X-ray
# networks, generative autoencoders, spiking networks, Bayesian layers, optical flow, a
# weather model, molecular message passing, face detection and parsing, text-to-speech,
# ECG networks, a state-space layer, a detection transformer and a beat tracker, read by
# nobody here before its first measure.
HOLDOUT_L: tuple[tuple[str, str], ...] = (
    ("python-doctr", "1.1.0"),
    ("torchxrayvision", "1.5.7"),
    ("pythae", "0.1.2"),
    ("spikingjelly", "2.0.0"),
    ("bayesian-torch", "0.5.0"),
    ("ptlflow", "0.4.2"),
    ("microsoft-aurora", "2.0.1"),
    ("chemprop", "2.3.1"),
    ("facexlib", "0.3.0"),
    ("kokoro", "0.9.4"),
    ("torch-ecg", "0.0.33"),
    ("s5-pytorch", "0.2.1"),
    ("rfdetr", "1.11.2"),
    ("beat-this", "1.1.0"),
)

# A thirteenth holdout, fetched once session 23's was worked on, none by lucidrains:
# invertible networks, a retrieval-augmented tabular model, offline RL, time-series classifiers, recommender
# models, a streaming audio codec and its language model, a neural vocoder, molecular
# representation, an LLM training library's layers, flow-matching text-to-speech,
# knowledge-graph embeddings, a protein language model, equivariant interatomic potentials
# and NeRF sampling, read by nobody here before its first measure.
HOLDOUT_M: tuple[tuple[str, str], ...] = (
    ("FrEIA", "0.2"),
    ("pytorch-tabr", "0.1.0"),
    ("d3rlpy", "2.8.1"),
    ("tsai", "1.0.1"),
    ("recbole", "1.2.1"),
    ("moshi", "0.2.13"),
    ("bigvgan", "2.4.1"),
    ("unimol-tools", "0.1.6"),
    ("ai2-olmo-core", "3.0.0"),
    ("matcha-tts", "0.0.7.2"),
    ("torchkge", "0.17.7"),
    ("esm", "3.2.1.post1"),
    ("nequip", "0.19.1"),
    ("nerfacc", "0.5.3"),
)

# The thirteenth holdout was fixed against in its turn: two speech enhancers, LaTeX OCR,
# two quantisation libraries' layers, differential privacy's layers, E(2)-equivariant CNNs, a
# small diffusion library, medical generative models, a probabilistic programming library's
# networks, physics-informed networks and neural operators, two state-space model libraries
# and point clouds, read by nobody here before its first measure.
HOLDOUT_N: tuple[tuple[str, str], ...] = (
    ("denoiser", "0.1.5"),
    ("mpsenet", "1.0.3"),
    ("pix2tex", "0.1.4"),
    ("brevitas", "0.13.4"),
    ("optimum-quanto", "0.2.7"),
    ("opacus", "1.6.0"),
    ("e2cnn", "0.2.3"),
    ("smalldiffusion", "0.5.0"),
    ("monai-generative", "0.2.3"),
    ("pyro-ppl", "1.9.2"),
    ("pina-mathlab", "0.3.2.post2610"),
    ("minimamba", "1.0.1"),
    ("neural-ssm", "0.44.0"),
    ("torch-pointcloud", "0.0.18"),
)

# The fourteenth holdout was fixed against in its turn, none by lucidrains: normalizing
# flows, LoRA-family adapters, image super-resolution, protein sequence models, RL
# actor-critics, self-supervised and generative networks, molecular potentials, optical
# flow, speech recognition, flow matching, segmentation heads, CTR recommenders, a deep
# learning library's layers (vision, tabular, text) and domain adaptation, read by nobody
# here before its first measure.
HOLDOUT_O: tuple[tuple[str, str], ...] = (
    ("flowtorch", "0.8"),
    ("lycoris-lora", "4.1.3"),
    ("super-image", "0.2.0"),
    ("tape-proteins", "0.5"),
    ("elegantrl", "0.3.6"),
    ("lightning-bolts", "0.7.0"),
    ("torchmd-net", "3.1.0"),
    ("ezflow", "0.2.5"),
    ("masr", "3.0.3"),
    ("torchcfm", "1.0.7"),
    ("torchseg", "0.0.1a4"),
    ("funrec", "1.0.10"),
    ("fastai", "2.8.12"),
    ("pytorch-adapt", "0.0.83"),
)

# The fifteenth holdout was fixed against in its turn, none by lucidrains: two diffusion
# vocoders, a speech codec, audio diffusion U-Nets and audio autoencoders, darknet detectors,
# knowledge distillation, tabular deep learning (Mamba and transformer blocks), 3-d medical
# segmentation and 2-d-to-3-d convolutions, soft mixtures of experts, quantization and
# pruning layers, image and video classification, and a graph transformer, read by
# nobody here before its first measure.
HOLDOUT_P: tuple[tuple[str, str], ...] = (
    ("diffwave", "0.1.7"),
    ("wavegrad", "0.1.5"),
    ("speechtokenizer", "1.0.1"),
    ("a-unet", "0.0.16"),
    ("audio-encoders-pytorch", "0.0.22"),
    ("lightnet", "4.0.0"),
    ("torchdistill", "1.1.5"),
    ("mambular", "1.5.1"),
    ("segmentation-models-pytorch-3d", "1.0.2"),
    ("acsconv", "0.1.1"),
    ("soft-mixture-of-experts", "0.2.0"),
    ("qsparse", "2.0.1"),
    ("classy-vision", "0.7.0"),
    ("graphtransformer-digress", "0.2.0"),
)

# The sixteenth holdout was fixed against in its turn, none by lucidrains: click-through-rate
# recommenders, an image tokenizer (VQGAN), audio tagging, continual learning, RL modules,
# speech recognition and speech enhancement, protein interaction, super-resolution and
# video restoration, two time-series foundation models, an equivariant interatomic
# potential, NeRF fields and GANs, read by nobody here before its first measure.
HOLDOUT_Q: tuple[tuple[str, str], ...] = (
    ("fuxictr", "2.3.10"),
    ("taming-transformers-rom1504", "0.0.6"),
    ("panns-inference", "0.1.1"),
    ("avalanche-lib", "0.6.0"),
    ("torchrl", "0.14.1"),
    ("resemble-enhance", "0.0.1"),
    ("clearvoice", "0.1.2"),
    ("dscript", "0.3.1"),
    ("basicsr-fixed", "1.4.2"),
    ("momentfm", "0.1.4"),
    ("orb-models", "0.5.5"),
    ("timesfm", "3.0.2"),
    ("nerfstudio", "1.1.5"),
    ("torchgan", "0.1.0"),
)

# The seventeenth holdout was fixed against in its turn, none by lucidrains: diffusion and flow-matching generators, Lipschitz layers, precipitation
# nowcasting (a GAN), text to speech, face landmarks, image-quality metrics, knowledge-graph
# embeddings, simulation-based inference, spiking networks, tabular ensembles and
# uncertainty-aware models, read by nobody here before its first measure.
HOLDOUT_R: tuple[tuple[str, str], ...] = (
    ("azula", "0.11.1"),
    ("deel-torchlip", "1.0.5"),
    ("dgmr", "1.4.4"),
    ("f5-tts", "1.1.22"),
    ("face-alignment", "1.5.0"),
    ("flow-matching", "1.0.10"),
    ("pyiqa", "0.1.16"),
    ("pykeen", "1.11.1"),
    ("sbi", "0.27.0"),
    ("sinabs", "3.1.3"),
    ("tabm", "0.0.3"),
    ("torch-uncertainty", "0.13.0"),
    ("pytorch-fid", "0.3.0"),
)

_SDIST_ENV = {"MAMBA_SKIP_CUDA_BUILD": "TRUE", "CAUSAL_CONV1D_SKIP_CUDA_BUILD": "TRUE"}

DEFAULT_DIR = Path(__file__).resolve().parent / "corpus"


def corpus_dir(arg: str | None = None) -> Path:
    """The corpus location: an explicit argument, $SHAPELINT_CORPUS, or benchmarks/corpus/."""
    return Path(arg or os.environ.get("SHAPELINT_CORPUS") or DEFAULT_DIR)


def _unpack(archive: Path, dest: Path) -> None:
    """Extract only .py members; paths that would escape dest are dropped."""
    dest.mkdir(parents=True, exist_ok=True)
    root = dest.resolve()

    def target(name: str) -> Path | None:
        out = (dest / name).resolve()
        return out if out.is_relative_to(root) and name.endswith(".py") else None

    if archive.suffix in (".whl", ".zip"):
        with zipfile.ZipFile(archive) as z:
            for info in z.infolist():
                out = target(info.filename)
                if out is not None and not info.is_dir():
                    out.parent.mkdir(parents=True, exist_ok=True)
                    out.write_bytes(z.read(info))
    else:
        with tarfile.open(archive) as t:
            for m in t.getmembers():
                out = target(m.name)
                f = t.extractfile(m) if m.isfile() and out is not None else None
                if f is not None:
                    out.parent.mkdir(parents=True, exist_ok=True)
                    out.write_bytes(f.read())


def fetch(dest: Path, packages: tuple[tuple[str, str], ...] = PACKAGES) -> list[str]:
    """Download and unpack every pinned release; returns the ones that failed."""
    failed = []
    dest.mkdir(parents=True, exist_ok=True)
    for name, version in packages:
        pkg_dir = dest / f"{name}-{version}"
        if pkg_dir.is_dir() and any(pkg_dir.rglob("*.py")):
            continue
        with tempfile.TemporaryDirectory() as tmp:
            cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "-q",
                   f"{name}=={version}", "-d", tmp]  # fmt: skip
            ok = subprocess.run(cmd, capture_output=True).returncode == 0
            if not ok:
                # pip prepares an sdist's metadata even when only downloading; setup
                # scripts that import torch (mamba-ssm) need the installed one and
                # must be told not to look for CUDA.
                env = {**os.environ, **_SDIST_ENV}
                ok = subprocess.run([*cmd, "--no-build-isolation"], env=env).returncode == 0
            if not ok:
                failed.append(f"{name}=={version}")
                continue
            shutil.rmtree(pkg_dir, ignore_errors=True)
            for archive in Path(tmp).iterdir():
                _unpack(archive, pkg_dir)
    return failed


def count_lines(dest: Path) -> tuple[int, int]:
    files = lines = 0
    for f in dest.rglob("*.py"):
        files += 1
        with open(f, "rb") as fh:
            lines += sum(1 for _ in fh)
    return files, lines


def main(argv: list[str]) -> int:
    import argparse

    # argparse, so that `--help` (or a mistyped option) is not taken for DEST.
    parser = argparse.ArgumentParser(
        prog="corpus.py",
        description=__doc__.split("\n\n", 1)[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("dest", nargs="?", help="default: $SHAPELINT_CORPUS or benchmarks/corpus/")
    parser.add_argument(
        "--annotated", action="store_true", help="fetch the jaxtyping-annotated packages"
    )
    parser.add_argument(
        "--holdout", action="store_true", help="fetch the released models outside the corpus"
    )
    parser.add_argument(
        "--holdout-b", action="store_true", help="fetch the second holdout (session 13)"
    )
    parser.add_argument(
        "--holdout-c", action="store_true", help="fetch the third holdout (session 14)"
    )
    parser.add_argument(
        "--holdout-d", action="store_true", help="fetch the fourth holdout (session 15)"
    )
    parser.add_argument(
        "--holdout-e", action="store_true", help="fetch the fifth holdout (session 16)"
    )
    parser.add_argument(
        "--holdout-f", action="store_true", help="fetch the sixth holdout (session 17)"
    )
    parser.add_argument(
        "--holdout-g", action="store_true", help="fetch the seventh holdout (session 18)"
    )
    parser.add_argument(
        "--holdout-h", action="store_true", help="fetch the eighth holdout (session 19)"
    )
    parser.add_argument(
        "--holdout-i", action="store_true", help="fetch the ninth holdout (session 20)"
    )
    parser.add_argument(
        "--holdout-j", action="store_true", help="fetch the tenth holdout (session 21)"
    )
    parser.add_argument(
        "--holdout-k", action="store_true", help="fetch the eleventh holdout (session 22)"
    )
    parser.add_argument(
        "--holdout-l", action="store_true", help="fetch the twelfth holdout (session 23)"
    )
    parser.add_argument(
        "--holdout-m", action="store_true", help="fetch the thirteenth holdout (session 24)"
    )
    parser.add_argument(
        "--holdout-n", action="store_true", help="fetch the fourteenth holdout (session 25)"
    )
    parser.add_argument(
        "--holdout-o", action="store_true", help="fetch the fifteenth holdout (session 26)"
    )
    parser.add_argument(
        "--holdout-p", action="store_true", help="fetch the sixteenth holdout (session 27)"
    )
    parser.add_argument(
        "--holdout-q", action="store_true", help="fetch the seventeenth holdout (session 28)"
    )
    parser.add_argument(
        "--holdout-r", action="store_true", help="fetch the eighteenth holdout (session 29)"
    )
    args = parser.parse_args(argv)
    packages = (
        ANNOTATED
        if args.annotated
        else HOLDOUT
        if args.holdout
        else HOLDOUT_B
        if args.holdout_b
        else HOLDOUT_C
        if args.holdout_c
        else HOLDOUT_D
        if args.holdout_d
        else HOLDOUT_E
        if args.holdout_e
        else HOLDOUT_F
        if args.holdout_f
        else HOLDOUT_G
        if args.holdout_g
        else HOLDOUT_H
        if args.holdout_h
        else HOLDOUT_I
        if args.holdout_i
        else HOLDOUT_J
        if args.holdout_j
        else HOLDOUT_K
        if args.holdout_k
        else HOLDOUT_L
        if args.holdout_l
        else HOLDOUT_M
        if args.holdout_m
        else HOLDOUT_N
        if args.holdout_n
        else HOLDOUT_O
        if args.holdout_o
        else HOLDOUT_P
        if args.holdout_p
        else HOLDOUT_Q
        if args.holdout_q
        else HOLDOUT_R
        if args.holdout_r
        else PACKAGES
    )
    dest = corpus_dir(args.dest)
    failed = fetch(dest, packages)
    files, lines = count_lines(dest)
    print(f"corpus: {dest}: {len(packages) - len(failed)} packages, {files} files, {lines} lines")
    for f in failed:
        print(f"failed: {f}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
