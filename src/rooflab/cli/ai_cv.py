"""`rooflab ai pool2d | batchnorm | groupnorm | upsample`: the vision layers beside conv2d
(review s28 R3 F9), counted as `rooflab torch` counts them (workloads/ops_cv.py); `ai
conv3d` and `ai conv_transpose2d` (workloads/ops_convnd.py, session 29); and conv2d's
channel-multiple note (F10)."""

from __future__ import annotations

import typer

from ..errors import InputError
from .ai_args import DTYPE, JSON, ML_DTYPE, OnAi, _n, conv_axes

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


def _emit_conv(op, on, json_out, assumed) -> None:
    """A conv3d / conv_transpose2d answer with conv2d's notes: PyTorch's TF32 default for
    an fp32 conv on an Ampere+ GPU, and channel counts tensor cores do not take whole."""
    from .ai import _emit as emit
    from .ai_layers import _tf32_conv_note

    def notes(d, roof):
        more = _tf32_conv_note(op, roof) + pad_note(op)
        return {"notes": [*d.get("notes", []), *more]} if more else None

    emit(op, on, json_out, assumed=assumed, roof_extra=notes)


def _axes3(text: str, name: str, minimum: int):
    """--stride/--padding/--dilation of conv3d: one value for every axis, or
    DEPTH,HEIGHT,WIDTH (torch.nn.Conv3d's tuples)."""
    parts = str(text).split(",")
    if len(parts) not in (1, 3):
        raise InputError(f"{name} takes one value or three, DEPTH,HEIGHT,WIDTH (e.g. {name} "
                         f"1,2,2); got '{text}'")
    values = tuple(_n(v.strip(), name, minimum) for v in parts)
    return values if len(values) == 3 else values[0]


def register(ai: typer.Typer) -> None:
    """Add the six subcommands (and deconv2d's alias conv_transpose2d)."""
    from ..workloads import ops_cv

    _register_convs(ai)

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


def _register_convs(ai: typer.Typer) -> None:
    """`rooflab ai conv3d` and `ai deconv2d` (alias conv_transpose2d)."""
    from ..workloads import ops_convnd

    @ai.command("conv3d")
    def conv3d(n: str = _N, c: str = typer.Option(..., "--c", help="input channels"),
               d: str = typer.Option(..., "--d", help="input depth (frames)"),
               h: str = _H, w: str = _W,
               k: str = typer.Option(..., "--k", help="output channels (filters)"),
               t: str = typer.Option("3", "--t", help="filter depth"),
               r: str = typer.Option("3", "--r", help="filter height"),
               s: str = typer.Option("3", "--s", help="filter width"),
               stride: str = typer.Option("1", help="S or SD,SH,SW"),
               padding: str = typer.Option("0", help="P or PD,PH,PW"),
               dilation: str = typer.Option("1", help="spacing of the filter taps (or "
                                            "DD,DH,DW)"),
               groups: str = typer.Option("1"), dtype: str | None = DTYPE,
               on: OnAi = None, json_out: bool = JSON) -> None:
        """3-D convolution (torch.nn.Conv3d: video, volumes), output Do x P x Q by
        conv2d's rule on each axis.

            rooflab ai conv3d --n 8 --c 64 --d 16 --h 56 --w 56 --k 64 --padding 1

        FLOP 2·N·K·(C/groups)·T·R·S·Do·P·Q (torch's flop counter); bytes as conv2d's: the
        input elements some output reads, the filters and the output once each."""
        _emit_conv(ops_convnd.conv3d(
            _n(n, "--n"), _n(c, "--c"), _n(d, "--d"), _n(h, "--h"), _n(w, "--w"),
            _n(k, "--k"), _n(t, "--t"), _n(r, "--r"), _n(s, "--s"),
            stride=_axes3(stride, "--stride", 1), padding=_axes3(padding, "--padding", 0),
            dilation=_axes3(dilation, "--dilation", 1), groups=_n(groups, "--groups"),
            dtype=dtype or ML_DTYPE), on, json_out, dtype is None)

    # listed as deconv2d: 'conv_transpose2d', 16 letters, widened `rooflab ai --help`'s
    # name column past 80 columns and cut every op's summary; the torch name works too
    @ai.command("conv_transpose2d", hidden=True)
    @ai.command("deconv2d")
    def conv_transpose2d(n: str = _N, c: str = typer.Option(..., "--c",
                                                            help="input channels"),
                         h: str = typer.Option(..., "--h", help="input height"),
                         w: str = typer.Option(..., "--w", help="input width"),
                         k: str = typer.Option(..., "--k", help="output channels"),
                         r: str = typer.Option("3", "--r", help="filter height"),
                         s: str = typer.Option("3", "--s", help="filter width"),
                         stride: str = typer.Option("1", help="S or SH,SW"),
                         padding: str = typer.Option("0", help="P or PH,PW"),
                         output_padding: str = typer.Option(
                             "0", "--output-padding", help="OP or OPH,OPW: added to one "
                             "side of the output (below the stride)"),
                         dilation: str = typer.Option("1", help="D or DH,DW"),
                         groups: str = typer.Option("1"), dtype: str | None = DTYPE,
                         on: OnAi = None, json_out: bool = JSON) -> None:
        """Transposed 2-D convolution (torch.nn.ConvTranspose2d; also `ai
        conv_transpose2d`): UNet and GAN decoders.

            rooflab ai deconv2d --n 8 --c 256 --h 32 --w 32 --k 128 --r 4 \\
                --s 4 --stride 2 --padding 1

        Output (H - 1)·stride - 2·padding + dilation·(R - 1) + output_padding + 1. Each
        input element scatters into an R x S window: FLOP 2·N·C·(K/groups)·R·S·H·W
        (torch's flop counter), whatever the stride. Bytes: the input, the filters and the
        output once each."""
        _emit_conv(ops_convnd.conv_transpose2d(
            _n(n, "--n"), _n(c, "--c"), _n(h, "--h"), _n(w, "--w"), _n(k, "--k"),
            _n(r, "--r"), _n(s, "--s"), stride=conv_axes(stride, "--stride", 1),
            padding=conv_axes(padding, "--padding", 0),
            output_padding=conv_axes(output_padding, "--output-padding", 0),
            dilation=conv_axes(dilation, "--dilation", 1), groups=_n(groups, "--groups"),
            dtype=dtype or ML_DTYPE), on, json_out, dtype is None)
