"""`rooflab ai pool2d | batchnorm | groupnorm | upsample`: the vision layers beside conv2d
(review s28 R3 F9), counted as `rooflab torch` counts them (workloads/ops_cv.py); and
conv2d's channel-multiple note (F10)."""

from __future__ import annotations

import typer

from .ai_args import DTYPE, JSON, ML_DTYPE, OnAi, _n

_N = typer.Option(..., "--n", help="batch")
_C = typer.Option(..., "--c", help="channels")
_H = typer.Option(..., "--h", help="height")
_W = typer.Option(..., "--w", help="width")


def pad_note(op) -> list[str]:
    """ops_conv.channel_pad_note for a conv2d held to the tensor unit (review s28 R3 F10):
    C = 3 does not fill fp16 tensor cores."""
    from ..workloads.ops_conv import channel_pad_note

    g = op.shape["groups"]
    note = channel_pad_note(op.precision, op.shape["c"] // g, op.shape["k"] // g)
    return [note] if note and op.unit == "tensor" else []


def _emit(op, on, json_out, assumed) -> None:
    from .ai import _emit as emit  # at call time: ai imports this module

    emit(op, on, json_out, assumed=assumed)


def register(ai: typer.Typer) -> None:
    """Add the four subcommands."""
    from ..workloads import ops_cv

    @ai.command("pool2d")
    def pool2d(n: str = _N, c: str = _C, h: str = _H, w: str = _W,
               kernel: str = typer.Option("2", help="window side"),
               stride: str | None = typer.Option(None, help="default: the window side"),
               padding: str = typer.Option("0"),
               mode: str = typer.Option("max", help="max | avg"),
               dtype: str | None = DTYPE, on: OnAi = None, json_out: bool = JSON) -> None:
        """2-D max or average pooling (torch's MaxPool2d / AvgPool2d, ceil_mode off).

            rooflab ai pool2d --n 32 --c 64 --h 112 --w 112 --kernel 3 --stride 2 \\
                --padding 1

        Max: 0 FLOP (comparisons); avg: the window's size per output. Bytes: input read,
        output written (PyTorch's max_pool2d_with_indices also writes 8 B int64 indices
        an output when autograd asks for them)."""
        _emit(ops_cv.pool2d(_n(n, "n"), _n(c, "c"), _n(h, "h"), _n(w, "w"),
                            _n(kernel, "--kernel"), None if stride is None
                            else _n(stride, "--stride"), _n(padding, "--padding", 0),
                            mode, dtype or ML_DTYPE), on, json_out, dtype is None)

    @ai.command("batchnorm")
    def batchnorm(n: str = _N, c: str = _C, h: str = _H, w: str = _W,
                  training: bool = typer.Option(False, "--training",
                                                help="batch statistics (7 FLOP an element)"),
                  dtype: str | None = DTYPE, on: OnAi = None, json_out: bool = JSON) -> None:
        """BatchNorm2d: 4 FLOP an element in eval (running statistics), 7 in training.

            rooflab ai batchnorm --n 32 --c 256 --h 56 --w 56

        Bytes: x read, y written, weight, bias, running mean and variance read. In eval
        after a conv it folds into the conv's weights and disappears (`rooflab report`
        says so for a traced one)."""
        _emit(ops_cv.norm2d(_n(n, "n"), _n(c, "c"), _n(h, "h"), _n(w, "w"), "batch",
                            training=training, dtype=dtype or ML_DTYPE),
              on, json_out, dtype is None)

    @ai.command("groupnorm")
    def groupnorm(n: str = _N, c: str = _C, h: str = _H, w: str = _W,
                  groups: str = typer.Option("32", help="channel groups"),
                  dtype: str | None = DTYPE, on: OnAi = None, json_out: bool = JSON) -> None:
        """GroupNorm with weight and bias: a layer norm over each group, 7 FLOP an
        element.

            rooflab ai groupnorm --n 2 --c 320 --h 64 --w 64 --groups 32"""
        _emit(ops_cv.norm2d(_n(n, "n"), _n(c, "c"), _n(h, "h"), _n(w, "w"), "group",
                            groups=_n(groups, "--groups"), dtype=dtype or ML_DTYPE),
              on, json_out, dtype is None)

    @ai.command("upsample")
    def upsample(n: str = _N, c: str = _C, h: str = _H, w: str = _W,
                 scale: float = typer.Option(2.0, help="scale factor"),
                 mode: str = typer.Option("nearest", help="nearest | bilinear"),
                 dtype: str | None = DTYPE, on: OnAi = None, json_out: bool = JSON) -> None:
        """2-D upsampling (F.interpolate): nearest 0 FLOP (a copy), bilinear 9 an output
        (three lerps of 2 multiplies and an add).

            rooflab ai upsample --n 2 --c 640 --h 32 --w 32 --mode nearest"""
        _emit(ops_cv.upsample2d(_n(n, "n"), _n(c, "c"), _n(h, "h"), _n(w, "w"), scale,
                                mode, dtype or ML_DTYPE), on, json_out, dtype is None)
