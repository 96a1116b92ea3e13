"""rooflab llm — transformer inference on the roof, from a Hugging Face config.json or a
llama.cpp .gguf file (its header: hyper-parameters and each tensor's stored type)."""

from __future__ import annotations

import warnings
from typing import TYPE_CHECKING, Annotated

import typer

from ..units import parse_link_rate
from .comm_options import link_latency_opt
from .llm_checks import (
    _batches,
    _check_link_from,
    _check_measured,
    _check_modes,
    _check_pp,
    _compared_names,
    _given_latency,
    _lengths,
    _on_or_first_compared,
    one_spelling,
)
from .llm_list_render import list_rows, list_table
from .llm_memory import check_gpu_mem_util

# The JSON, CSV and chart live in llm_output, the tables and lines in llm_render.
from .llm_output import _write_output, result_dict
from .options import on_option, say_name_note_now

if TYPE_CHECKING:
    # imported where used: the model, the workloads and their numpy cost `llm --help`
    # 0.3 s of CPU and every other verb nothing (cli/app.py loads a verb's module only)
    from ..workloads.llm.links import GivenLatency
    from .llm_render import LlmRun

# --on as every verb declares it: ROOFLAB_ON when not given, with the note that says so
# (cli/options.py); without either, --compare's first device is the roof.
OnLlm = Annotated[str | None, on_option("a cluster profile from `rooflab probe --comm` "
                                        "also gives --tp/--pp their links; without --on, "
                                        "--compare's first device")]

# --tp/--pp and their links, declared here so that the command's signature stays a list
TpOpt = Annotated[int, typer.Option("--tp", help="tensor-parallel degree: divides the "
                                    "attention heads; past one 8-device node (NVLink, xGMI, "
                                    "a Gaudi's RoCE mesh) the all-reduces cross the network "
                                    "`rooflab scale` assumes for the device: one 400 Gb/s "
                                    "NIC per GPU (50 GB/s per direction; MI250X/MI300A a 200 "
                                    "Gb/s Slingshot NIC), a Gaudi its own 3 scale-out "
                                    "ports; a TPU's ICI pod has no node edge")]
PpOpt = Annotated[int, typer.Option("--pp", help="pipeline-parallel stages (consecutive "
                                    "layers per device or TP group)")]
MicroBatchesOpt = Annotated[int | None, typer.Option(
    "--micro-batches", metavar="M", help="--pp's micro-batches of --batch in flight for the "
    "throughput view (default: --pp)")]
LinkBwOpt = Annotated[str | None, typer.Option(
    "--link-bw", help="TP link bandwidth, e.g. 450GB/s (also the stage link under --pp "
    "without --tp; default: the link --link-from, or --on a cluster profile, measured, "
    "else the catalog's)")]
LinkFromOpt = Annotated[str | None, typer.Option(
    "--link-from", metavar="FILE", help="cluster profile from `rooflab probe --comm`: --tp's "
    "all-reduces on its measured all-reduce alpha/beta, --pp's sends on its send/recv "
    "(default when --on is one)")]
HopLatencyOpt = Annotated[float | None, typer.Option(
    "--hop-latency-us", metavar="US", help="link latency per ring hop (one send to the next "
    "rank, what nccl-tests and a send/recv fit measure) in microseconds: each --tp "
    "all-reduce pays 2(tp-1) hops (--tp 8, 10 us: 140 us), a --pp send without --tp one "
    "(default: the measured one of --link-from, else 0: bandwidth only)")]
LinkLatencyOpt = link_latency_opt(", or of one --pp send without --tp")
PpLinkBwOpt = Annotated[str | None, typer.Option(
    "--pp-link-bw", help="stage-to-stage link bandwidth per direction, e.g. 50GB/s "
    "(default: --link-bw without --tp, else one 400 Gb/s NIC per device past an 8-device "
    "node, InfiniBand or RoCE, AMD and Gaudi too; else the catalog's link)")]
PpLinkLatencyOpt = Annotated[float | None, typer.Option(
    "--pp-link-latency", metavar="US", help="latency of one stage-to-stage send (one hop) "
    "in microseconds (default: --hop-latency-us or --link-latency without --tp, else 0)")]


def register(app) -> None:
    @app.command("llm")
    def llm(
        config: str = typer.Argument(..., help="config.json path, llama.cpp .gguf file, or "
                                     "bundled name; 'list' shows the bundled configs"),
        on: OnLlm = None,
        batch: str = typer.Option("1", "--batch",
                                  help="batch(es), e.g. 1,4,16,64: a sweep, taken in increasing "
                                   "order with repeats dropped (4,1,1 sweeps 1,4); the first "
                                   "given is the batch of the tables; the sweep is of decode "
                                   "steps (TPOT), of prefills (TTFT) with --phase prefill, "
                                   "both with --phase both"),
        prompt: str = typer.Option("512", "--prompt", help="prompt tokens (prefill); "
                                   "several, e.g. 512,2048,8192: a prompt sweep (TTFT per "
                                   "prompt length at the batch; the first is tabled)"),
        context: str = typer.Option(None, "--context",
                                    help="tokens in the KV cache at the tabled decode step "
                                    "(default: prompt + generate/2, the average step); "
                                    "several, e.g. 512,8192,32768: a context sweep (TPOT "
                                    "per context at the batch; the first is tabled); not "
                                    "with a --batch list"),
        generate: int = typer.Option(128, "--generate", help="tokens generated"),
        weights: str = typer.Option(None, "--weights", help="fp32 bf16 fp16 fp8 int8 int6 "
                                    "int4 int3 int2 nvfp4 mxfp4 (intN: N/8 B per weight and "
                                    "an fp16 scale per --group, GPTQ/EXL2/llama.cpp style; "
                                    "fp4 with an fp8 scale per 16 / an e8m0 "
                                    "scale per 32); llama.cpp types q4_0 q8_0 q4_k q5_k "
                                    "q6_k iq4_xs ... at their blocks' bytes (Q4_K 144 B "
                                    "per 256); default: a .gguf's tensors as stored, the "
                                    "config's quantization_config, else its torch_dtype"),
        kv: str = typer.Option(None, "--kv", help="KV-cache dtype: fp32 bf16 fp16 fp8 "
                               "int8 int4, llama.cpp's q8_0 q4_0 q4_1 iq4_nl (default: "
                               "the --act dtype when it is 16-bit; under 8-bit "
                               "activations, --act fp8/int8 or the config's, "
                               "the model's torch_dtype, as vLLM's kv_cache_dtype auto)"),
        act: str = typer.Option(None, "--act", help="activation dtype: fp32 bf16 fp16 fp8 "
                                "int8 nvfp4 mxfp4 (int8: W8A8, with --weights int8/int4; "
                                "nvfp4/mxfp4: W4A4 fp4 GEMMs, with fp4 weights; default: the "
                                "config's quantization_config, else its torch_dtype)"),
        attn: str = typer.Option("flash", "--attn", help="flash or naive"),
        decode_tokens: int = typer.Option(1, "--decode-tokens", metavar="N",
                                          help="query tokens per sequence in each decode "
                                          "step: K + 1 for a speculative-decoding verify "
                                          "of K draft tokens (vLLM num_speculative_tokens "
                                          "K), LLM-Viewer's n_parallel_decode (also "
                                          "spelt --parallel-decode); N x the FLOP over "
                                          "one read of the KV cache"),
        # --decode-tokens' other spelling, apart and hidden: listed beside it, the two names
        # (33 characters) were cut at 80 columns, "--decode-tokens,--parallel-d…" (s36 J)
        parallel_decode: int = typer.Option(None, "--parallel-decode", hidden=True),
        group: int = typer.Option(None, "--group", help="int2-int8 quantization group size "
                                  "(default: the config's quantization_config, else 128 "
                                  "for int2-int8 weights, per channel for int8 with "
                                  "--act int8; nvfp4 16, mxfp4 32)"),
        tp: TpOpt = 1,
        pp: PpOpt = 1,
        micro_batches: MicroBatchesOpt = None,
        link_bw: LinkBwOpt = None,
        link_from: LinkFromOpt = None,
        hop_latency: HopLatencyOpt = None,
        link_latency: LinkLatencyOpt = None,
        pp_link_bw: PpLinkBwOpt = None,
        pp_link_latency: PpLinkLatencyOpt = None,
        memory: str = typer.Option(None, "--memory", help="device memory, e.g. 16GB "
                                   "(default: the catalog's, or the profile's)"),
        gpu_mem_util: float = typer.Option(None, "--gpu-mem-util", help="share of the "
                                           "device memory the engine may use, as vLLM's "
                                           "gpu_memory_utilization (0.9 there); of "
                                           "the driver's total where the catalog has it "
                                           "(default: the whole memory)"),
        tpot_ms: float = typer.Option(None, "--tpot-ms", help="a measured TPOT to place"),
        ttft_ms: float = typer.Option(None, "--ttft-ms", help="a measured TTFT to place: the "
                                      "prefill of the first --prompt at the first --batch; "
                                      "said under every --phase, as the TTFT floor is"),
        launches: int = typer.Option(None, "--launches", help="kernels per decode step of "
                                     "the --tpot-ms run (nsys, torch.profiler), for the gap "
                                     "split (default: the fused count, with eager HF "
                                     "generate's estimate beside it)"),
        phase: str = typer.Option("both", "--phase", help="decode, prefill or both"),
        whatif: bool = typer.Option(False, "--whatif", help="quantization/KV/attention what-ifs"),
        compare: str = typer.Option(None, "--compare", help="other hardware, comma-separated"),
        json_out: bool = typer.Option(False, "--json", help="print JSON"),
        output: str = typer.Option(None, "-o", "--output", help="chart .png/.svg, .json, .csv"),
    ) -> None:
        """Per-kernel decode and prefill on the roof, TPOT/TTFT floors, memory, batch sweep.

        CONFIG: a bundled name (`rooflab llm list`), a Hugging Face repo id of one
        (meta-llama/Llama-2-7b-hf), a config.json path (or its folder), or a llama.cpp
        .gguf file (header only: each tensor counted at its stored type; the gguf
        extra reads it).

          rooflab llm tinyllama-1.1b --on T4 --batch 1,4,16,64,128 --context 500
          rooflab llm llama-3-8b --on A100 --context 512,4096,8192 --prompt 512,4096
          rooflab llm path/to/config.json --on H100 --weights int4 --kv fp8
          rooflab llm Llama-3-8B-Q4_K_M.gguf --on "RTX 4090" --batch 1,4
          rooflab llm llama-3-70b --on H200 --tp 8 --batch 16
          rooflab llm tinyllama-1.1b --on comm.json --tp 2 --pp 2
          rooflab llm mixtral-8x7b --on H100 --phase decode --compare H200,MI300X

        Floors are lower bounds: weights read once per step, 2 FLOP per multiply-add,
        each kernel at max(FLOP / peak, bytes / bandwidth) of the roof (`rooflab docs llm`).
        """
        from ..workloads.llm.config_names import load_config

        if config == "list":
            return _list_configs(json_out)
        cfg = load_config(config)   # an unknown model is said before a missing --on
        decode_tokens = one_spelling(decode_tokens, parallel_decode)
        on, compare, on_note = _on_or_first_compared(on, compare)
        _check_modes(phase, whatif, tp, pp)
        latency = _given_latency(hop_latency, link_latency, tp, pp)
        _check_link_from(link_from, link_bw, tp, pp)
        # each rate parsed once, here: a bare `--link-bw 900` (bytes/s) is refused
        link_rate = parse_link_rate(link_bw, "--link-bw") if link_bw is not None else None
        pp_link_rate = (parse_link_rate(pp_link_bw, "--pp-link-bw") if pp_link_bw is not None
                        else None)
        _check_pp(pp, micro_batches, pp_link_bw, pp_link_latency)
        _check_measured(tpot=tpot_ms, ttft=ttft_ms)
        check_gpu_mem_util(gpu_mem_util)
        from .common import check_output

        check_output(output, (".json", ".csv", ".png", ".svg"),
                     inputs=[config, on, link_from, *(compare or "").split(",")])
        prompts = _lengths(prompt, "--prompt", "512,2048,8192")
        contexts = _lengths(context, "--context", "512,8192,32768")
        run(cfg, on=on, batches=_batches(batch), prompt=prompts[0],
            context=contexts[0] if contexts else None, contexts=contexts, prompts=prompts,
            generate=generate, weights=weights, kv=kv, act=act, attn=attn, group=group,
            decode_tokens=decode_tokens, tp=tp, link_bw=link_rate, memory=memory,
            tpot_ms=tpot_ms, ttft_ms=ttft_ms, launches=launches, phase=phase,
            whatif=whatif, compare=compare, json_out=json_out, output=output,
            latency=latency, pp=pp,
            micro_batches=micro_batches, pp_link_bw=pp_link_rate, link_from=link_from,
            pp_link_latency_s=None if pp_link_latency is None else pp_link_latency / 1e6,
            on_note=on_note, gpu_mem_util=gpu_mem_util)


def _list_configs(json_out: bool) -> None:
    """`rooflab llm list`: the bundled configs."""
    from ..model.schema import SCHEMA_VERSION
    from .common import console, emit_json

    if json_out:
        emit_json({"schema_version": SCHEMA_VERSION, "configs": list_rows()})
        return
    out = console()
    out.width = max(out.width, 112)
    out.print(list_table())


def run(cfg, *, on, batches, prompt, context, generate, weights, kv, act, attn, group, tp,
        link_bw: float | None, memory, tpot_ms, phase, whatif, compare, json_out, output,
        latency: GivenLatency | None = None, pp: int = 1, micro_batches: int | None = None,
        pp_link_bw: float | None = None, pp_link_latency_s: float | None = None,
        link_from: str | None = None, on_note: str | None = None,
        contexts: tuple[int, ...] = (), prompts: tuple[int, ...] = (),
        launches: int | None = None, gpu_mem_util: float | None = None,
        decode_tokens: int = 1, ttft_ms: float | None = None) -> None:
    """The options resolved into a Study (workloads.llm.study), run and shown; link_bw and
    pp_link_bw in bytes/s (parsed once, by the command), latency as typed for the
    --link-* link; contexts and prompts: the sequence-length sweeps (Request)."""
    from ..hardware.resolve import load_roof
    from ..workloads.llm.analysis import Request
    from ..workloads.llm.gguf_config import run_notes
    from ..workloads.llm.links import comm_profile, stage_link, stage_link_given, tp_link
    from ..workloads.llm.quant_kernels import fp16_only_note
    from ..workloads.llm.settings import settings_for
    from ..workloads.llm.settings_dtype import bf16_fallback_note
    from ..workloads.llm.settings_notes import act_sets_weights_note, check_group, kv_default_note
    from ..workloads.llm.study import Study, overridden_quantization, shared_memory_notes
    from .llm_memory import device_capacity
    from .llm_words import catalog_device

    roof = load_roof(on)
    say_name_note_now(on)    # which device a family name chose, before the tables
    s = settings_for(cfg, weights, group, act=act, kv=kv, attn=attn, tp=tp, pp=pp, roof=roof,
                     decode_tokens=decode_tokens)
    check_group(s, group)
    cfg = run_notes(cfg, s, weights, act, kv)     # a GGUF file's notes, as it is run
    req = Request(batches=batches, prompt=prompt, context=context, generate=generate,
                  contexts=contexts, prompts=prompts)
    dev = catalog_device(on, roof)
    mem, memory_from, host_note = device_capacity(dev, on, memory, gpu_mem_util)
    # --link-bw wins over a measured link; --link-from (or --on as a cluster profile)
    # gives the links that were not given
    comm = comm_profile(on, link_from) if tp > 1 or pp > 1 else None
    tpl = tp_link(s, roof, dev, comm, link_bw, latency) if tp > 1 else None
    stage = (stage_link(s, roof, dev, stage_link_given(s, link_bw, latency, pp_link_bw,
                                                       pp_link_latency_s), comm)
             if pp > 1 else None)
    notes = ((on_note,) if on_note else ()) + overridden_quantization(cfg, weights, act) + (
        shared_memory_notes(dev, bool(memory)))
    if weights is None and act is None:
        notes += bf16_fallback_note(cfg, roof) + fp16_only_note(cfg, weights, act, roof)
    notes += act_sets_weights_note(cfg, weights, act) + kv_default_note(act, kv, s) + host_note
    study = Study(cfg, roof, s, req, device_bytes=mem, tp_link=tpl, pp_link=stage,
                  micro_batches=micro_batches,
                  tpot_s=None if tpot_ms is None else tpot_ms / 1e3, launches=launches,
                  ttft_s=None if ttft_ms is None else ttft_ms / 1e3,
                  whatif=whatif, memory_from=memory_from,
                  compare=_compared(compare, gpu_mem_util), notes=notes)
    res, said = _run_study(study)
    _show(res, phase, json_out, output, said)


def _run_study(study):
    """run_study, its context warnings shown as `warning:` lines; with them, the messages
    said, which the report's closing notes then leave out (they were printed twice, as
    `warning:` and again as `note:`; review s33 E)."""
    from ..workloads.llm.analysis import ContextWarning
    from ..workloads.llm.study import run_study
    from .common import warn

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ContextWarning)
        res = run_study(study)
    for w in caught:
        warn(str(w.message))
    return res, frozenset(str(w.message) for w in caught)


def _show(res: LlmRun, phase: str, json_out: bool, output: str | None,
          said: frozenset = frozenset()) -> None:
    """The study as JSON or tables, and -o's file; `said`: warnings already on stderr."""
    from .common import console, emit_json
    from .llm_render import print_report

    data = result_dict(res, phase)
    if output:
        _write_output(output, data, res, phase)
    if json_out:
        emit_json(data)
    else:
        out = console()
        out.width = max(out.width, 130)   # the kernel tables need the room even in a pipe
        print_report(out, res, phase, said)
    if output:   # said last, as the other verbs do; on stderr (s22 r3 F7)
        from .common import wrote

        wrote(output)


def _compared(compare: str | None, util: float | None = None) -> tuple:
    """--compare's devices as the study takes them: name, roof and memory judged as --on's
    (llm_memory.device_capacity, --gpu-mem-util), a family name's note said as --on's."""
    if not compare:
        return ()
    from ..hardware.resolve import load_roofs
    from ..workloads.llm.study import Compared
    from .llm_memory import device_capacity
    from .llm_words import catalog_device

    out = []
    for name in _compared_names(compare):
        roof = load_roofs(name)[0]
        say_name_note_now(name)
        mem = device_capacity(catalog_device(name, roof), name, None, util)[0]
        out.append(Compared(name, roof, mem or None))
    return tuple(out)


