"""The hardware table: peak FLOP/s per dtype, memory, bandwidth, each with its source.

Peaks are *dense* figures. Vendors headline "with sparsity" numbers (2:4
structured sparsity doubles the rate on paper); those are recorded beside the
dense figure as ``sparse`` and never used as a peak. Where a datasheet gives only
the sparse figure, the dense one is half of it, as the lecture does for the H100
(1,979 TFLOP/s "with sparsity" / 2 = 989.5 TFLOP/s).

Units are plain SI: FLOP/s, bytes, bytes/s; "GB" means 10^9 bytes, as vendors use it.

Users add or override chips in pyproject.toml::

    [tool.shapelint.hardware.my-gpu]
    name = "My GPU"
    bf16 = "400 TFLOP/s"        # dense; or bf16_sparse = ... and it is halved
    memory = "48 GB"
    bandwidth = "1.2 TB/s"
    source = "our own microbenchmark, 2025-06"

and :func:`merge_hardware` returns the merged table.
"""

from __future__ import annotations

import difflib
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from shapelint.ops.dtypes import SHORT_NAMES, canonical, dtype_bytes, short_name

DTYPES = ("bf16", "fp16", "fp8", "tf32", "fp32")

# Bytes per element of each dtype as stored (tf32 is stored as fp32).
DTYPE_BYTES = {d: dtype_bytes(SHORT_NAMES[d]) for d in DTYPES}

# Spellings of the columns beyond torch's names (which ops.dtypes reads).
_DTYPE_ALIASES = {
    "float8": "fp8",
    "float8_e5m2": "fp8",
    "e4m3": "fp8",
    "e5m2": "fp8",
    "tfloat32": "tf32",
    "single": "fp32",
}


class HardwareError(ValueError):
    """Unknown chip or dtype, or a bad [tool.shapelint.hardware] entry."""


@dataclass(frozen=True)
class Figure:
    """One number from a datasheet (or from the user), with where it came from.

    ``value`` is what computations use; ``sparse`` is the vendor's "with
    sparsity" figure when the source gives one (kept for display, never a peak).
    """

    value: float
    source: str
    sparse: float | None = None
    note: str = ""


@dataclass(frozen=True)
class Chip:
    key: str
    name: str
    peaks: Mapping[str, Figure]  # dtype -> dense peak FLOP/s
    memory: Figure  # bytes of device memory
    bandwidth: Figure  # device-memory bandwidth, bytes/s
    aliases: tuple[str, ...] = ()
    note: str = ""

    def peak(self, dtype: str = "bf16") -> float:
        return self.peak_figure(dtype).value

    def peak_figure(self, dtype: str = "bf16") -> Figure:
        dt = canonical_dtype(dtype)
        fig = self.peaks.get(dt)
        if fig is None:
            have = ", ".join(self.peaks) or "none"
            raise HardwareError(
                f"{self.name} has no {dt} peak in the hardware table "
                f"(its source publishes none); known dtypes: {have}"
            )
        return fig

    def critical_intensity(self, dtype: str = "bf16") -> float:
        """FLOPs per byte at which compute time equals memory time (the roofline's ridge)."""
        return self.peak(dtype) / self.bandwidth.value

    def figures(self) -> dict[str, Figure]:
        """Every figure of the row, by a stable name (for listings and tests)."""
        out = {f"peak_{dt}": fig for dt, fig in self.peaks.items()}
        out["memory"] = self.memory
        out["bandwidth"] = self.bandwidth
        return out


def canonical_dtype(dtype: str) -> str:
    d = dtype.strip().lower().removeprefix("torch.")
    d = _DTYPE_ALIASES.get(d) or short_name(canonical(d) or d) or d
    if d not in DTYPES:
        raise HardwareError(f"unknown dtype {dtype!r}; use one of: {', '.join(DTYPES)}")
    return d


def _sparse(sparse: float, source: str, note: str = "") -> Figure:
    """A datasheet figure quoted only "with sparsity": the dense peak is half of it."""
    return Figure(sparse / 2, source, sparse=sparse, note=note or "datasheet: with sparsity; /2")


def _dense(value: float, source: str, sparse: float | None = None, note: str = "") -> Figure:
    return Figure(value, source, sparse=sparse, note=note)


# --- sources -----------------------------------------------------------------------

_H100 = (
    "NVIDIA H100 Tensor Core GPU datasheet, {col} column "
    "(https://resources.nvidia.com/en-us-tensor-core/nvidia-tensor-core-gpu-datasheet)"
)
_H200 = (
    "NVIDIA H200 Tensor Core GPU datasheet / product page, H200 SXM column "
    "(https://www.nvidia.com/en-us/data-center/h200/)"
)
_B200 = (
    "NVIDIA HGX B200 specifications, per-GPU 'HGX B200' column "
    "(https://www.nvidia.com/en-us/data-center/hgx/)"
)
_A100_80 = (
    "NVIDIA A100 Tensor Core GPU datasheet, A100 80GB SXM column "
    "(https://www.nvidia.com/content/dam/en-zz/Solutions/Data-Center/a100/pdf/"
    "nvidia-a100-datasheet-us-nvidia-1758950-r4-web.pdf)"
)
_A100_40 = (
    "NVIDIA A100 Tensor Core GPU datasheet (2020), A100 40GB SXM column "
    "(https://www.nvidia.com/content/dam/en-zz/Solutions/Data-Center/a100/pdf/"
    "nvidia-a100-datasheet.pdf)"
)
_L4 = "NVIDIA L4 Tensor Core GPU datasheet (https://www.nvidia.com/en-us/data-center/l4/)"
_A10G = (
    "no public NVIDIA datasheet (AWS-only part); figures as tabulated in Baseten, "
    "'NVIDIA A10 vs A10G for ML model inference' "
    "(https://www.baseten.co/blog/nvidia-a10-vs-a10g-for-ml-model-inference/)"
)
_A10G_MEM = "AWS EC2 G5 instance page (https://aws.amazon.com/ec2/instance-types/g5/)"
_RTX4090 = (
    "NVIDIA Ada GPU Architecture whitepaper, Appendix A, GeForce RTX 4090 column "
    "(https://images.nvidia.com/aem-dam/Solutions/geforce/ada/nvidia-ada-gpu-architecture.pdf)"
)
_MI300X = (
    "AMD Instinct MI300X accelerator data sheet "
    "(https://www.amd.com/content/dam/amd/en/documents/instinct-tech-docs/data-sheets/"
    "amd-instinct-mi300x-data-sheet.pdf)"
)
_TPU = "Google Cloud TPU documentation, '{v}' system architecture table (https://cloud.google.com/tpu/docs/{v})"

_FP32_ACC = "FP32-accumulate figure (what PyTorch matmuls use); FP16-accumulate is 2x"


def _nvidia_sparse_only(
    src: str, bf16_sparse: float, fp8_sparse: float, tf32_sparse: float, fp32: float
) -> dict[str, Figure]:
    """Hopper, Blackwell and L4 datasheets quote every tensor-core rate with sparsity only."""
    return {
        "bf16": _sparse(bf16_sparse, src),
        "fp16": _sparse(bf16_sparse, src),
        "fp8": _sparse(fp8_sparse, src),
        "tf32": _sparse(tf32_sparse, src),
        "fp32": _dense(fp32, src, note="non-tensor-core FP32"),
    }


def _nvidia_a100(src: str) -> dict[str, Figure]:
    """Both A100 SXM sizes have the same peaks; only memory and bandwidth differ."""
    return {
        "bf16": _dense(312e12, src, sparse=624e12),
        "fp16": _dense(312e12, src, sparse=624e12),
        "tf32": _dense(156e12, src, sparse=312e12),
        "fp32": _dense(19.5e12, src, note="non-tensor-core FP32"),
    }


def _build_default() -> dict[str, Chip]:
    h100_sxm = _H100.format(col="H100 SXM")
    h100_pcie = _H100.format(col="H100 PCIe")
    v5e, v5p, v6e = (_TPU.format(v=v) for v in ("v5e", "v5p", "v6e"))
    tpu_note = "TPUs publish bf16 (and int8) peaks only; fp32 matmuls run as multi-pass bf16"
    chips = [
        Chip(
            "h100-sxm",
            "NVIDIA H100 SXM",
            _nvidia_sparse_only(h100_sxm, 1979e12, 3958e12, 989e12, 67e12),
            Figure(80e9, h100_sxm),
            Figure(3.35e12, h100_sxm),
            aliases=("h100", "h100-sxm5", "h100sxm"),
        ),
        Chip(
            "h100-pcie",
            "NVIDIA H100 PCIe",
            _nvidia_sparse_only(h100_pcie, 1513e12, 3026e12, 756e12, 51e12),
            Figure(80e9, h100_pcie),
            Figure(2.0e12, h100_pcie),
            aliases=("h100pcie",),
        ),
        Chip(
            "h200",
            "NVIDIA H200 SXM",
            _nvidia_sparse_only(_H200, 1979e12, 3958e12, 989e12, 67e12),
            Figure(141e9, _H200),
            Figure(4.8e12, _H200),
            aliases=("h200-sxm",),
        ),
        Chip(
            "b200",
            "NVIDIA B200 (HGX)",
            _nvidia_sparse_only(_B200, 4.5e15, 9e15, 2.2e15, 75e12),
            Figure(180e9, _B200, note="early material quoted 192 GB"),
            Figure(7.7e12, _B200, note="early material quoted 8 TB/s"),
            aliases=("b200-hgx",),
        ),
        Chip(
            "a100-80gb",
            "NVIDIA A100 80GB SXM",
            _nvidia_a100(_A100_80),
            Figure(80e9, _A100_80),
            Figure(2039e9, _A100_80),
            aliases=("a100", "a100-80g", "a100-sxm", "a100-80gb-sxm"),
            note="no FP8 tensor cores (Ampere)",
        ),
        Chip(
            "a100-40gb",
            "NVIDIA A100 40GB SXM",
            _nvidia_a100(_A100_40),
            Figure(40e9, _A100_40),
            Figure(1555e9, _A100_40),
            aliases=("a100-40g", "a100-40gb-sxm"),
            note="no FP8 tensor cores (Ampere)",
        ),
        Chip(
            "l4",
            "NVIDIA L4",
            _nvidia_sparse_only(_L4, 242e12, 485e12, 120e12, 30.3e12),
            Figure(24e9, _L4),
            Figure(300e9, _L4),
        ),
        Chip(
            "a10g",
            "NVIDIA A10G (AWS)",
            {
                "bf16": _dense(70e12, _A10G),
                "fp16": _dense(70e12, _A10G),
                "tf32": _dense(35e12, _A10G),
                "fp32": _dense(31.52e12, _A10G, note="non-tensor-core FP32"),
            },
            Figure(24e9, _A10G_MEM),
            Figure(600e9, _A10G),
            note="third-party figures: treat peaks as approximate",
        ),
        Chip(
            "rtx4090",
            "NVIDIA GeForce RTX 4090",
            {
                "bf16": _dense(165.2e12, _RTX4090, sparse=330.4e12, note=_FP32_ACC),
                "fp16": _dense(165.2e12, _RTX4090, sparse=330.4e12, note=_FP32_ACC),
                "fp8": _dense(330.3e12, _RTX4090, sparse=660.6e12, note=_FP32_ACC),
                "tf32": _dense(82.6e12, _RTX4090, sparse=165.2e12),
                "fp32": _dense(82.6e12, _RTX4090, note="non-tensor-core FP32"),
            },
            Figure(24e9, _RTX4090),
            Figure(1008e9, _RTX4090),
            aliases=("4090", "rtx-4090", "geforce-rtx-4090"),
        ),
        Chip(
            "mi300x",
            "AMD Instinct MI300X",
            {
                "bf16": _dense(1307.4e12, _MI300X, sparse=2614.9e12),
                "fp16": _dense(1307.4e12, _MI300X, sparse=2614.9e12),
                "fp8": _dense(2614.9e12, _MI300X, sparse=5229.8e12),
                "tf32": _dense(653.7e12, _MI300X, sparse=1307.4e12),
                "fp32": _dense(163.4e12, _MI300X, note="FP32 matrix"),
            },
            Figure(192e9, _MI300X),
            Figure(5.3e12, _MI300X),
            aliases=("amd-mi300x",),
        ),
        Chip(
            "tpu-v5e",
            "Google TPU v5e",
            {"bf16": _dense(197e12, v5e)},
            Figure(16e9, v5e),
            Figure(819e9, v5e),
            aliases=("v5e", "tpuv5e", "tpu-v5-lite", "v5litepod"),
            note=tpu_note,
        ),
        Chip(
            "tpu-v5p",
            "Google TPU v5p",
            {"bf16": _dense(459e12, v5p), "fp8": _dense(459e12, v5p, note="same rate as bf16")},
            Figure(95 * 2**30, v5p, note="given as 95 GiB"),
            Figure(2765e9, v5p),
            aliases=("v5p", "tpuv5p"),
            note=tpu_note,
        ),
        Chip(
            "tpu-v6e",
            "Google TPU v6e (Trillium)",
            {"bf16": _dense(918e12, v6e)},
            Figure(32e9, v6e),
            Figure(1638e9, v6e),
            aliases=("v6e", "tpuv6e", "trillium"),
            note=tpu_note,
        ),
    ]
    return {c.key: c for c in chips}


DEFAULT_HARDWARE: dict[str, Chip] = _build_default()


def _norm(name: str) -> str:
    return re.sub(r"[\s_]+", "-", name.strip().lower())


def lookup(name: str, table: Mapping[str, Chip] | None = None) -> Chip:
    """The chip called ``name`` (its key or an alias, any case; spaces, '_' and '-' alike)."""
    table = DEFAULT_HARDWARE if table is None else table
    want = _norm(name)
    squashed = want.replace("-", "")
    for chip in table.values():
        for n in (chip.key, *chip.aliases):
            if _norm(n) == want or _norm(n).replace("-", "") == squashed:
                return chip
    names = sorted({n for c in table.values() for n in (c.key, *c.aliases)})
    close = difflib.get_close_matches(want, names, n=3, cutoff=0.5)
    hint = f" (did you mean {', '.join(close)}?)" if close else ""
    keys = ", ".join(table)
    raise HardwareError(f"unknown hardware {name!r}{hint}; known: {keys}")


# --- quantities ----------------------------------------------------------------------

_SI = {"": 1.0, "k": 1e3, "m": 1e6, "g": 1e9, "b": 1e9, "t": 1e12, "p": 1e15, "e": 1e18}
_BIN = {"ki": 2**10, "mi": 2**20, "gi": 2**30, "ti": 2**40, "pi": 2**50}
_QUANTITY = re.compile(
    r"^\s*(?P<num>[+-]?(?:\d[\d_,]*\.?\d*|\.\d+)(?:e[+-]?\d+)?)\s*"
    r"(?P<prefix>ki|mi|gi|ti|pi|k|m|g|b|t|p|e)?"
    r"(?P<unit>bytes?|b|flops?(?:/s)?|flop/s|b/s|bytes/s|ops?(?:/s)?|/s)?\s*$",
    re.IGNORECASE,
)


def parse_quantity(value: Any, what: str = "value") -> float:
    """A number from config or the command line: ``3.35e12``, ``"80 GB"``, ``"70B"``,
    ``"3.35 TB/s"``, ``"989.5 TFLOP/s"``, ``"95 GiB"``. Units are checked only loosely:
    they say the scale; the field says what is measured."""
    if isinstance(value, bool):
        raise HardwareError(f"{what}: expected a number, got {value!r}")
    if isinstance(value, (int, float)):
        out = float(value)
    elif isinstance(value, str):
        m = _QUANTITY.match(value)
        if not m:
            raise HardwareError(f"{what}: cannot read {value!r} as a number (e.g. 80e9, '80 GB')")
        num = float(m["num"].replace("_", "").replace(",", ""))
        prefix = (m["prefix"] or "").lower()
        unit = (m["unit"] or "").lower()
        if prefix == "b" and not unit:
            scale = 1e9  # "70B" parameters: billions
        elif prefix == "b":
            scale = 1.0  # "12 B/s": the B is bytes, not billions
        elif prefix in _BIN:
            scale = float(_BIN[prefix])
        else:
            scale = _SI[prefix]
        out = num * scale
    else:
        raise HardwareError(f"{what}: expected a number, got {type(value).__name__}")
    if not math.isfinite(out):
        raise HardwareError(f"{what}: {value!r} is not finite")
    return out


# --- user config -----------------------------------------------------------------------

_ROW_KEYS = {"name", "source", "aliases", "note", "memory", "bandwidth", *DTYPES}
_ROW_KEYS |= {f"{d}_sparse" for d in DTYPES}
_ROW_KEYS |= {f"{k}_source" for k in ("memory", "bandwidth", *DTYPES)}


def merge_hardware(
    config: Mapping[str, Mapping[str, Any]] | None,
    base: Mapping[str, Chip] | None = None,
) -> dict[str, Chip]:
    """The table with ``config`` (the ``[tool.shapelint.hardware]`` table) applied.

    Each key of ``config`` names a chip. A name (or alias) already in the table
    overrides the given figures of that row; a new name adds a row, which needs
    ``memory``, ``bandwidth`` and at least one peak. Figures without their own
    ``<field>_source`` take the row's ``source``, else "user config [...]", so
    every figure still says where it came from. Raises :class:`HardwareError`.
    """
    table = dict(DEFAULT_HARDWARE if base is None else base)
    if not config:
        return table
    if not isinstance(config, Mapping):
        raise HardwareError("[tool.shapelint.hardware] must be a table of chips")
    for raw_name, row in config.items():
        where = f"[tool.shapelint.hardware.{raw_name}]"
        if not isinstance(row, Mapping):
            raise HardwareError(f"{where} must be a table, got {type(row).__name__}")
        unknown = sorted(set(row) - _ROW_KEYS)
        if unknown:
            raise HardwareError(
                f"{where}: unknown key(s) {', '.join(unknown)}; allowed: "
                "name, source, aliases, note, memory, bandwidth, "
                f"{', '.join(DTYPES)}, <dtype>_sparse, <field>_source"
            )
        existing: Chip | None
        try:
            existing = lookup(str(raw_name), table)
        except HardwareError:
            existing = None
        row_source = row.get("source", f"user config {where}")
        if not isinstance(row_source, str):
            raise HardwareError(f"{where}: source must be a string")

        def src(field_name: str, row=row, row_source=row_source, where=where) -> str:
            s = row.get(f"{field_name}_source", row_source)
            if not isinstance(s, str):
                raise HardwareError(f"{where}: {field_name}_source must be a string")
            return s

        peaks = dict(existing.peaks) if existing else {}
        for dt in DTYPES:
            dense = row.get(dt)
            sparse = row.get(f"{dt}_sparse")
            if dense is None and sparse is None:
                continue
            sp = _positive(sparse, f"{where} {dt}_sparse") if sparse is not None else None
            if dense is not None:
                peaks[dt] = Figure(_positive(dense, f"{where} {dt}"), src(dt), sparse=sp)
            else:
                peaks[dt] = _sparse(sp, src(dt))  # type: ignore[arg-type]
        memory = existing.memory if existing else None
        if "memory" in row:
            memory = Figure(_positive(row["memory"], f"{where} memory"), src("memory"))
        bandwidth = existing.bandwidth if existing else None
        if "bandwidth" in row:
            bandwidth = Figure(_positive(row["bandwidth"], f"{where} bandwidth"), src("bandwidth"))
        missing = [n for n, v in (("memory", memory), ("bandwidth", bandwidth)) if v is None]
        if not peaks:
            missing.append(f"a peak ({', '.join(DTYPES)})")
        if missing:
            raise HardwareError(f"{where}: a new chip needs {', '.join(missing)}")
        aliases = row.get("aliases", [])
        if isinstance(aliases, str):
            aliases = [aliases]
        if not isinstance(aliases, (list, tuple)) or not all(isinstance(a, str) for a in aliases):
            raise HardwareError(f"{where}: aliases must be a list of strings")
        note = row.get("note", existing.note if existing else "")
        if existing:
            chip = replace(
                existing,
                name=str(row.get("name", existing.name)),
                peaks=peaks,
                memory=memory,
                bandwidth=bandwidth,
                aliases=tuple(dict.fromkeys((*existing.aliases, *aliases))),
                note=str(note),
            )
        else:
            key = _norm(str(raw_name))
            chip = Chip(
                key,
                str(row.get("name", raw_name)),
                peaks,
                memory,
                bandwidth,
                aliases=tuple(aliases),
                note=str(note),
            )
        for other in table.values():
            if other.key == chip.key:
                continue
            clash = {_squash(n) for n in (chip.key, *chip.aliases)} & {
                _squash(n) for n in (other.key, *other.aliases)
            }
            if clash:
                raise HardwareError(
                    f"{where}: name(s) {', '.join(sorted(clash))} already belong to {other.key}"
                )
        table[chip.key] = chip
    return table


def _squash(name: str) -> str:
    return _norm(name).replace("-", "")


def _positive(value: Any, what: str) -> float:
    out = parse_quantity(value, what)
    if out <= 0:
        raise HardwareError(f"{what}: must be positive, got {value!r}")
    return out


def load_hardware_table(pyproject: str | Path | None = None) -> dict[str, Chip]:
    """The table merged with ``[tool.shapelint.hardware]`` of ``pyproject`` (if given/found).

    With ``pyproject=None`` the nearest pyproject.toml from the working directory
    up is used when it has such a table.
    """
    path = Path(pyproject) if pyproject is not None else _find_pyproject()
    if path is None:
        return dict(DEFAULT_HARDWARE)
    try:
        import tomllib  # 3.11+; read only when config is asked for
    except ModuleNotFoundError:  # pragma: no cover - Python 3.10
        import tomli as tomllib  # type: ignore[no-redef]
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as e:
        raise HardwareError(f"cannot read {path}: {e.strerror or e}") from None
    except tomllib.TOMLDecodeError as e:
        raise HardwareError(f"{path}: invalid TOML: {e}") from None
    section = data.get("tool", {}).get("shapelint", {}).get("hardware")
    return merge_hardware(section)


def _find_pyproject() -> Path | None:
    here = Path.cwd()
    for d in (here, *here.parents):
        p = d / "pyproject.toml"
        if p.is_file():
            return p
    return None


__all__ = [
    "DEFAULT_HARDWARE",
    "DTYPES",
    "DTYPE_BYTES",
    "Chip",
    "Figure",
    "HardwareError",
    "canonical_dtype",
    "load_hardware_table",
    "lookup",
    "merge_hardware",
    "parse_quantity",
]
