"""Tile and wave quantization of a tiled GEMM, and whether its staged tiles fit on chip.

Seed 004 names, among the reasons a GEMM sits below its roof, tile utilisation: "矩阵尺寸
不是 tile 大小的整数倍时,边上的 tile 只有一部分在干活" (when the size is not a multiple of
the tile, the edge tiles only partly work), and cites NVIDIA's "Matrix Multiplication
Background User's Guide" §3, which names two effects:
- tile quantization: the output is cut into BM x BN tiles, one per thread block; where M or
  N is no multiple of the tile, the last row/column of tiles pads with work nobody needs,
  and the padded tiles take as long as full ones. Useful fraction = M·N / (⌈M/BM⌉·BM ·
  ⌈N/BN⌉·BN).
- wave quantization: the tiles run in waves of (SMs x tiles resident per SM); a last,
  partial wave leaves SMs idle. Wave efficiency = tiles / (⌈waves⌉ · SMs · tiles per SM).
Both cost compute time, not DRAM bytes (padded loads are masked): the compute ceiling P
becomes P x fraction x efficiency, and the attainable rate min(that, B x AI) is a ceiling
the kernel cannot pass (provenance: derived). Few busy SMs may also draw less than the
full bandwidth: not modelled, so on the memory side this stays an upper bound.

On chip: a multistage mainloop keeps `stages` K-slices of A (BM x BK) and B (BK x BN) in
shared memory: S·(BM·BK·s_a + BK·BN·s_b) bytes per block, against the per-block and per-SM
limits of hardware/smem.py. Only the operand stages are counted (the epilogue usually
reuses them); registers and threads also limit residency, which rooflab does not know.

Pure functions on numbers; the CLI (cli/ai_tile.py) gathers the device facts and prints.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ..errors import InputError
from .sm_limits import SmemLimits

# BK without --tile BMxBNxBK: the K step of Triton's matmul tutorial configurations
# (BLOCK_SIZE_K 32 in all but its 128x256 one) and of cuBLAS's Ampere "..._32x5"/"_32x3"
# kernels; CUTLASS's SM80 fp16 default is 64 (then the tile needs twice the bytes).
DEFAULT_BK = 32


def _positive(value, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise InputError(f"{what} must be a positive whole number; got {value!r}")
    return value


@dataclass(frozen=True)
class TileCount:
    """The output tiles of batch x (M x N) cut into BM x BN (provenance: counted)."""

    m: int
    n: int
    bm: int
    bn: int
    batch: int = 1

    @property
    def tiles_m(self) -> int:
        return -(-self.m // self.bm)

    @property
    def tiles_n(self) -> int:
        return -(-self.n // self.bn)

    @property
    def tiles(self) -> int:
        return self.batch * self.tiles_m * self.tiles_n

    @property
    def useful_fraction(self) -> float:
        """Output elements / elements the tiles cover: 1 where BM divides M and BN divides
        N; 1000x1000 in 128x128 tiles: 1e6 / (1024·1024) = 0.954."""
        return (self.m * self.n) / (self.tiles_m * self.bm * self.tiles_n * self.bn)


def tile_count(m: int, n: int, bm: int, bn: int, batch: int = 1) -> TileCount:
    return TileCount(_positive(m, "m"), _positive(n, "n"), _positive(bm, "tile BM"),
                     _positive(bn, "tile BN"), _positive(batch, "batch"))


@dataclass(frozen=True)
class Waves:
    """tiles over sms x tiles_per_sm slots (provenance: derived)."""

    tiles: int
    sms: int
    tiles_per_sm: int = 1

    @property
    def slots(self) -> int:
        """Tiles the whole GPU runs at once: one wave."""
        return self.sms * self.tiles_per_sm

    @property
    def waves(self) -> float:
        return self.tiles / self.slots

    @property
    def full_waves(self) -> int:
        """Waves the launch takes: ⌈tiles / slots⌉."""
        return -(-self.tiles // self.slots)

    @property
    def last_wave_tiles(self) -> int:
        return self.tiles - (self.full_waves - 1) * self.slots

    @property
    def efficiency(self) -> float:
        """Busy slot-waves / slot-waves paid for: 64 tiles on 108 SMs x 1: 0.593."""
        return self.tiles / (self.full_waves * self.slots)


def wave_count(tiles: int, sms: int, tiles_per_sm: int = 1) -> Waves:
    return Waves(_positive(tiles, "tiles"), _positive(sms, "SMs"),
                 _positive(tiles_per_sm, "--tiles-per-sm"))


def smem_bytes(bm: int, bn: int, bk: int, stages: int, a_element_bytes: float,
               b_element_bytes: float) -> int:
    """Shared memory one block stages: S·(BM·BK·s_a + BK·BN·s_b), in whole bytes;
    3·(128·32 + 32·128)·2 = 49152 (48 KiB)."""
    return math.ceil(stages * (bm * bk * a_element_bytes + bk * bn * b_element_bytes))


@dataclass(frozen=True)
class SmemFit:
    """A BM x BN x BK tile's operand stages against one GPU's shared memory."""

    bm: int
    bn: int
    bk: int
    stages: int
    a_element_bytes: float
    b_element_bytes: float
    limits: SmemLimits

    @property
    def stage_bytes(self) -> float:
        return self.bm * self.bk * self.a_element_bytes + self.bk * self.bn * self.b_element_bytes

    @property
    def bytes_per_tile(self) -> int:
        return smem_bytes(self.bm, self.bn, self.bk, self.stages, self.a_element_bytes,
                          self.b_element_bytes)

    @property
    def fits(self) -> bool:
        return self.bytes_per_tile <= self.limits.per_block_bytes

    @property
    def tiles_per_sm(self) -> int:
        """Blocks one SM holds by shared memory alone: per SM // (tile + the 1 KB each
        block reserves from 8.x on); 0 where one does not fit."""
        if not self.fits:
            return 0
        return self.limits.per_sm_bytes // (self.bytes_per_tile
                                            + self.limits.reserved_per_block_bytes)

    @property
    def max_stages(self) -> int:
        """The most stages of this tile one block may hold (0: not even one)."""
        return int(self.limits.per_block_bytes // self.stage_bytes)


def smem_fit(bm: int, bn: int, bk: int, stages: int, a_element_bytes: float,
             b_element_bytes: float, limits: SmemLimits) -> SmemFit:
    for v, what in ((bm, "tile BM"), (bn, "tile BN"), (bk, "tile BK"), (stages, "--stages")):
        _positive(v, what)
    for v, what in ((a_element_bytes, "A's element bytes"), (b_element_bytes,
                                                             "B's element bytes")):
        if not (isinstance(v, (int, float)) and math.isfinite(v) and v > 0):
            raise InputError(f"{what} must be a positive number; got {v!r}")
    return SmemFit(bm, bn, bk, stages, float(a_element_bytes), float(b_element_bytes), limits)


def fit_remedy(fit: SmemFit) -> str:
    """What would fit instead, in the options' words."""
    if fit.max_stages >= 1:
        return (f"use --stages {fit.max_stages} or fewer, or a smaller BK/BN "
                f"(one stage is {fit.stage_bytes / 1024:.3g} KiB)")
    return "even one stage does not fit: use a smaller BM, BN or BK"


def quantized_fraction(count: TileCount, waves: Waves | None) -> float:
    """useful fraction x wave efficiency (the efficiency is 1 where the SMs are not
    known)."""
    return count.useful_fraction * (waves.efficiency if waves is not None else 1.0)


def quantized_rate(attainable: float, peak: float, count: TileCount,
                   waves: Waves | None) -> float:
    """The attainable FLOP/s left by both quantizations: min(attainable, peak x fraction x
    efficiency). The padded tiles and the idle SMs of the last wave cost compute time,
    not DRAM bytes (edge loads are masked, the bytes are the same), so they lower the
    compute ceiling; where the memory roof binds below it they change nothing.
    Provenance: derived."""
    return min(attainable, peak * quantized_fraction(count, waves))


def quantized_floor(flop: float, nbytes: float, peak: float, bytes_per_s: float,
                    count: TileCount, waves: Waves | None) -> float:
    """The work floor at the quantized compute ceiling: roofline.time_floor (the one home
    of max(FLOP/P, bytes/B)) with P x fraction x efficiency for P. 2e9 FLOP fp32 on an
    A100 in 128x128 tiles: 2e9 / 11.02e12 = 181 us, not 2e9 / 19.5e12 = 103 us.
    Provenance: derived."""
    from .roofline import time_floor

    return time_floor(flop, nbytes, peak * quantized_fraction(count, waves), bytes_per_s)
