"""s20 d2 #2: timing samples that split into two well-separated groups (two shapes timed
into one entry, a clock that changed mid-run) are flagged where sample warnings surface:
rooflab.measure's meta["warning"], the bench table's flags, compare's notes; a bimodal
pair is never called 'within noise' without the warning. The rule must stay quiet on real
runs: REAL holds every zoo kernel's samples from four `rooflab bench` runs on this 2-core
machine under load (default and --quick, 2026-12-01, 5-12 samples each)."""

from __future__ import annotations

import json

from rooflab.bench.check import FLAG_TEXT
from rooflab.cli.main import main
from rooflab.files import write_json
from rooflab.measuring import timed_kernel
from rooflab.model.kernel import Kernel
from rooflab.probe.timer import TimingPlan

MS = 1e-3
# 5 samples near 1 ms and 4 near 2 ms: the shape 256 and 512 timed as one 'k'
TWO_SHAPES = [1.00 * MS, 1.02 * MS, 1.01 * MS, 2.00 * MS, 1.00 * MS, 2.03 * MS, 1.01 * MS,
              2.01 * MS, 2.02 * MS]


def test_two_groups_by_hand():
    from rooflab.model.sample_groups import two_groups

    g = two_groups(TWO_SHAPES)
    # fast: 1.00 1.00 1.01 1.01 1.02 (range 0.02); slow: 2.00-2.03 (range 0.03);
    # gap 2.00 - 1.02 = 0.98 ms > 3 x 0.03 ms; medians 1.01 and 2.015 ms (shown 2.01:
    # 2.0149999 in floats)
    assert (len(g.fast), len(g.slow)) == (5, 4)
    assert abs(g.gap - 0.98 * MS) < 1e-12 and abs(g.spread - 0.03 * MS) < 1e-12
    assert abs(g.ratio - 2.015 / 1.01) < 1e-9
    assert g.words() == "5 samples near 1.01 ms and 4 near 2.01 ms (2.00x apart)"


def test_outliers_and_tight_ticks_are_not_two_groups():
    from rooflab.model.sample_groups import two_groups

    # one or two held-up samples are outliers (the noise test's business), not a group
    assert two_groups([1.0] * 7 + [1.5, 1.6]) is None
    assert two_groups([1.0, 1.01, 1.02, 1.0, 1.01, 1.01, 1.02, 1.0, 1.9]) is None
    # a timer's two ticks 1 % apart: a gap under 5 % of the time does not matter
    assert two_groups([1.0] * 5 + [1.01] * 5) is None
    # three slow of nine (a clock that dropped for the last third) is a group
    assert two_groups([1.0, 1.01, 1.0, 1.02, 1.01, 1.0, 1.5, 1.51, 1.5]) is not None
    # too few to split: 5 samples have no two groups of 3
    assert two_groups([1.0, 1.0, 2.0, 2.0, 2.0]) is None


def test_real_bench_samples_are_not_flagged():
    from rooflab.model.sample_groups import two_groups

    flagged = [(name, s) for name, s in REAL if two_groups(s) is not None]
    assert flagged == [] and len(REAL) == 80


def test_measure_warns_on_a_clock_that_changed_mid_run():
    # fake clock: each call takes 1 ms, from the 6th call on 2 ms (a clock switching)
    now, made = [0.0], [0]

    def call():
        made[0] += 1
        now[0] += (1.0 if made[0] < 7 else 2.0) * MS + made[0] * 1e-9

    plan = TimingPlan(warmup_s=0.0, sample_s=MS, budget_s=0.0, min_samples=10,
                      max_samples=10)
    k = timed_kernel(call, name="k", flop={"fp32": 1e6}, bytes={"DRAM": 1e6},
                     provenance={"flop": "given", "bytes": "given"}, plan=plan,
                     clock=lambda: now[0])
    assert len(k.samples) == 10
    said = k.meta["warning"]
    assert "k: timing samples split into two groups, 5 samples near 1 ms and 5 near 2 ms" \
        in said and "pin the clocks" in said
    # one call timed over and over has one shape: load or the clock (review s20 x1 F3)
    assert "two groups of calls were timed into one entry (other load that came and went " \
        "(samples alternating between two times) or a clock that changed mid-run)" in said
    assert "time each shape" not in said and "re-run on a quiet machine" in said


def test_a_decorated_function_called_with_two_shapes_warns():
    from rooflab.measure_aggregate import aggregate

    # one run per call (a decorated function's kernel): 5 calls at one size, 4 at another
    runs = [Kernel("step", {"fp32": 1e6}, {"DRAM": 1e6}, seconds=s, samples=(s,),
                   meta={"seconds_stat": "single run"}) for s in TWO_SHAPES]
    k = aggregate(runs)
    assert k.calls == 9 and "step: timing samples split into two groups, 5 samples near " \
        "1.01 ms and 4 near 2.01 ms" in k.meta["warning"]


def test_bench_flag():
    from rooflab.bench.check import check_floors
    from rooflab.model.ceiling import Ceiling, Roof

    roof = Roof(name="r", kind="measured",
                compute=(Ceiling(4e11, precision="fp32", unit="vector",
                                 provenance="measured"),),
                memory=(Ceiling(4e10, level="DRAM", provenance="measured"),))
    k = Kernel("k", {"fp32": 1e6}, {"DRAM": 1e6}, seconds=1.01 * MS, samples=TWO_SHAPES)
    tight = Kernel("t", {"fp32": 1e6}, {"DRAM": 1e6}, seconds=1.01 * MS,
                   samples=[1.0 * MS, 1.01 * MS, 1.02 * MS] * 3)
    flagged, quiet = check_floors(roof, (k, tight))
    assert "bimodal" in flagged.meta["flags"] and "bimodal" not in quiet.meta["flags"]
    # a zoo kernel has one shape: load or clocks, a quiet machine (review s20 x1 F3)
    assert "re-run on a quiet machine" in FLAG_TEXT["bimodal"]
    assert "time each shape" not in FLAG_TEXT["bimodal"]


def _doc(samples):
    return {"kernels": [{"name": "k", "flop": {"fp32": 1e6}, "bytes": {"DRAM": 6e6},
                         "seconds": sorted(samples)[len(samples) // 2],
                         "samples": samples}]}


def test_compare_does_not_call_a_mixture_within_noise(tmp_path, capsys):
    # the same mixture both runs: the U test finds p = 1 ('within noise') of a kernel
    # whose 1 ms shape could have moved with the 2 ms one not
    write_json(tmp_path / "b.json", _doc(TWO_SHAPES))
    write_json(tmp_path / "a.json", _doc(list(reversed(TWO_SHAPES))))
    assert main(["compare", str(tmp_path / "b.json"), str(tmp_path / "a.json"),
                 "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    (m,) = out["matches"]
    assert m["within_noise"] is True and m["noise_p_value"] == 1.0
    assert m["cannot_tell"] == ("the first and second runs' samples split into two groups, "
                                "so the U test compared mixtures: its p says nothing of "
                                "either group")
    notes = " | ".join(out["notes"])
    assert ("k: timing samples split into two groups (in the first run 5 samples near "
            "1.01 ms and 4 near 2.01 ms (2.00x apart); in the second run") in notes
    assert "'within noise' is not 'no change'" in notes and "pin the clocks" in notes
    # the text table: 'cannot tell', never 'within noise'
    assert main(["compare", str(tmp_path / "b.json"), str(tmp_path / "a.json")]) == 0
    text = " ".join(capsys.readouterr().out.split())
    assert "cannot tell (p 1; see notes)" in text and "within noise (p" not in text


def test_compare_gate_does_not_pass_a_mixture_as_noise(tmp_path, capsys):
    # one sample moved from the 1 ms group to the 2 ms one: the median (the time
    # compared) jumps 1.02 -> 2.00 ms, +96 %, and the U test cannot tell the mixtures apart
    # (p = 0.72); before, the gate let it pass as 'within the noise'
    after = [1.00 * MS, 1.01 * MS, 1.02 * MS, 1.01 * MS, 2.00 * MS, 2.01 * MS, 2.02 * MS,
             2.03 * MS, 2.00 * MS]
    write_json(tmp_path / "b.json", _doc(TWO_SHAPES))
    write_json(tmp_path / "a.json", _doc(after))
    assert main(["compare", str(tmp_path / "b.json"), str(tmp_path / "a.json"),
                 "--fail-if-slower", "5", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    (m,) = out["matches"]
    assert round(m["change_pct"], 1) == 96.1 and round(m["noise_p_value"], 2) == 0.72
    assert out["within_noise"] == [] and out["regressions"] == []
    assert not [n for n in out["notes"] if "within the noise" in n]
    (told,) = [n for n in out["notes"] if "cannot tell from these samples" in n]
    assert told.startswith("k: +96.1 %, cannot tell from these samples (the first and "
                           "second runs' samples split into two groups")
    # a kernels file with samples may hold two shapes: they first, then one shape's
    # causes (review s20 x1 F3: load that came and went among them)
    assert told.endswith("time each shape (each input size) as its own kernel; for one "
                         "shape, re-run on a quiet machine and pin the clocks (cpupower "
                         "frequency-set / nvidia-smi -lgc)")


REAL: list[tuple[str, list[float]]] = [
 ('copy_fp64', [0.04046, 0.03258, 0.03274, 0.0326, 0.03326, 0.04238, 0.03697]),
 ('scale_fp64',
  [0.02815, 0.02876, 0.03783, 0.02868, 0.04663, 0.03202, 0.02793, 0.01814, 0.03204]),
 ('add_fp64', [0.05535, 0.04762, 0.05242, 0.04506, 0.06477]),
 ('triad_fp64', [0.07605, 0.0706, 0.0669, 0.08337, 0.06359]),
 ('triad_fp32', [0.06249, 0.05403, 0.0641, 0.06559, 0.05493]),
 ('sum_fp64',
  [0.02132, 0.0225, 0.02387, 0.01086, 0.03367, 0.02098, 0.0207, 0.02315, 0.02538, 0.01824,
   0.01301, 0.02331]),
 ('dot_fp64', [0.03598, 0.03598, 0.04797, 0.03202, 0.03999, 0.03997, 0.05999]),
 ('gemv_fp64', [0.05986, 0.07998, 0.06, 0.05204, 0.06698]),
 ('gemm_fp64_64', [7.366e-05, 7.728e-05, 6.52e-05, 6.894e-05, 8.639e-05]),
 ('gemm_fp64_256', [0.05195, 0.06001, 0.072, 0.05599, 0.07198]),
 ('gemm_fp64_1024', [0.2839, 0.248, 0.2559, 0.2822, 0.3099]),
 ('gemm_fp32_1024', [0.18, 0.188, 0.1752, 0.1567, 0.152]),
 ('gemm_fp32_2048', [1.033, 0.972, 0.8154, 0.7788, 0.7618]),
 ('bgemm_fp32_32', [0.001222, 0.001536, 0.001597, 0.001358, 0.001371]),
 ('conv2d_fp32', [0.1094, 0.06928, 0.08404, 0.08854, 0.1101]),
 ('softmax_fp32', [0.2629, 0.196, 0.2057, 0.1927, 0.2832]),
 ('layernorm_fp32', [0.258, 0.259, 0.1892, 0.1718, 0.1384]),
 ('exp_fp32', [0.09125, 0.09, 0.08691, 0.09419, 0.08085]),
 ('fft_c128', [0.3687, 0.2712, 0.2487, 0.2691, 0.2382]),
 ('sort_fp64', [0.06902, 0.07521, 0.0728, 0.0756, 0.06975]),
 ('copy_fp64', [0.03469, 0.03031, 0.03488, 0.03136, 0.03057]),
 ('scale_fp64', [0.04604, 0.03589, 0.02611, 0.04632, 0.03888]),
 ('add_fp64', [0.04038, 0.05448, 0.04444, 0.04045, 0.04472]),
 ('triad_fp64', [0.05676, 0.06548, 0.04768, 0.05308, 0.06263]),
 ('triad_fp32', [0.07825, 0.06608, 0.08066, 0.06793, 0.0988]),
 ('sum_fp64', [0.01308, 0.02123, 0.01759, 0.01714, 0.02934]),
 ('dot_fp64', [0.0359, 0.01904, 0.04894, 0.03322, 0.05478]),
 ('gemv_fp64', [0.02442, 0.04751, 0.056, 0.04397, 0.05599]),
 ('gemm_fp64_64', [4.687e-05, 4.69e-05, 4.739e-05, 3.721e-05, 5.483e-05]),
 ('gemm_fp64_256', [0.0566, 0.05441, 0.03353, 0.05243, 0.0679]),
 ('gemm_fp64_1024', [0.212, 0.2142, 0.478, 0.2502, 0.2496]),
 ('gemm_fp32_1024', [0.1879, 0.204, 0.152, 0.172, 0.168]),
 ('gemm_fp32_2048', [0.8128, 0.8071, 0.868, 0.936, 1.065]),
 ('bgemm_fp32_32', [0.003338, 0.00127, 0.00227, 0.001631, 0.002164]),
 ('conv2d_fp32', [0.08835, 0.1184, 0.09593, 0.08546, 0.07583]),
 ('softmax_fp32', [0.232, 0.2975, 0.2603, 0.2493, 0.2702]),
 ('layernorm_fp32', [0.1869, 0.1923, 0.1931, 0.21, 0.1466]),
 ('exp_fp32', [0.2455, 0.1743, 0.1923, 0.2166, 0.2011]),
 ('fft_c128', [0.4189, 0.4967, 0.4502, 0.4189, 0.4768]),
 ('sort_fp64', [0.1163, 0.1253, 0.1188, 0.126, 0.1116]),
 ('copy_fp64',
  [0.02339, 0.01981, 0.01596, 0.0129, 0.01995, 0.01968, 0.01732, 0.01564, 0.01708, 0.02098,
   0.01711, 0.01657, 0.02012, 0.01226, 0.02043]),
 ('scale_fp64',
  [0.01575, 0.01461, 0.01551, 0.01959, 0.02251, 0.02544, 0.02102, 0.02149, 0.02149]),
 ('add_fp64',
  [0.01952, 0.01765, 0.01724, 0.0175, 0.01751, 0.01915, 0.01706, 0.01925, 0.01813]),
 ('triad_fp64',
  [0.03359, 0.02452, 0.03167, 0.02939, 0.02487, 0.02569, 0.02961, 0.02492, 0.02502, 0.02931]),
 ('triad_fp32',
  [0.02405, 0.02463, 0.02387, 0.0234, 0.02536, 0.0232, 0.0307, 0.02387, 0.02412, 0.02417,
   0.02413]),
 ('sum_fp64',
  [0.01101, 0.01215, 0.01985, 0.01309, 0.009674, 0.006028, 0.01236, 0.01681, 0.01627]),
 ('dot_fp64',
  [0.01453, 0.01741, 0.016, 0.01599, 0.01601, 0.01598, 0.01599, 0.01602, 0.01996, 0.01599,
   0.0168, 0.01518, 0.01599, 0.01599, 0.02399]),
 ('gemv_fp64',
  [0.02397, 0.02397, 0.01601, 0.01735, 0.01611, 0.02806, 0.02645, 0.01597, 0.01524, 0.02073,
   0.01598, 0.0149, 0.02909]),
 ('gemm_fp64_64',
  [4.451e-05, 2.547e-05, 2.3e-05, 1.841e-05, 2.899e-05, 3.442e-05, 5.031e-05, 3.972e-05,
   4.031e-05]),
 ('gemm_fp64_256',
  [0.04046, 0.03949, 0.04397, 0.03201, 0.02797, 0.03603, 0.03198, 0.03199, 0.02799]),
 ('gemm_fp64_1024', [0.08797, 0.112, 0.128, 0.1383, 0.1538, 0.152, 0.1519, 0.196, 0.1908]),
 ('gemm_fp32_1024', [0.112, 0.132, 0.152, 0.1261, 0.1298, 0.116, 0.104, 0.112, 0.136]),
 ('gemm_fp32_2048', [0.5944, 0.5969, 0.5286, 0.6448, 0.7482, 0.8235, 0.6413, 0.6378, 0.6279]),
 ('bgemm_fp32_32',
  [0.00138, 0.001487, 0.001477, 0.001571, 0.001499, 0.00148, 0.001413, 0.001463, 0.001315]),
 ('conv2d_fp32',
  [0.05489, 0.05324, 0.0285, 0.04073, 0.05649, 0.04652, 0.04116, 0.04267, 0.04119]),
 ('softmax_fp32', [0.1813, 0.1986, 0.1806, 0.1798, 0.1754, 0.1693, 0.1588, 0.1403, 0.1428]),
 ('layernorm_fp32', [0.1009, 0.11, 0.1205, 0.1181, 0.1518, 0.1001, 0.1465, 0.1308, 0.1256]),
 ('exp_fp32', [0.09986, 0.09807, 0.126, 0.1052, 0.1324, 0.1537, 0.08236, 0.1023, 0.1119]),
 ('fft_c128', [0.324, 0.3245, 0.3161, 0.2741, 0.3727, 0.2765, 0.204, 0.2402, 0.2994]),
 ('sort_fp64',
  [0.05771, 0.05644, 0.05381, 0.05929, 0.06183, 0.05086, 0.05958, 0.07559, 0.072]),
 ('copy_fp64',
  [0.02787, 0.02445, 0.03543, 0.03229, 0.03123, 0.03152, 0.03157, 0.02786, 0.02327]),
 ('scale_fp64',
  [0.02928, 0.03426, 0.03161, 0.03553, 0.0195, 0.02711, 0.02741, 0.03121, 0.03427]),
 ('add_fp64',
  [0.04383, 0.03329, 0.02458, 0.02621, 0.01771, 0.02414, 0.03114, 0.02537, 0.02024]),
 ('triad_fp64',
  [0.04375, 0.05496, 0.04425, 0.05967, 0.0376, 0.04826, 0.04455, 0.06178, 0.06248]),
 ('triad_fp32',
  [0.03989, 0.0455, 0.03367, 0.0336, 0.04637, 0.04948, 0.04476, 0.04411, 0.03798]),
 ('sum_fp64',
  [0.01597, 0.01586, 0.01589, 0.01563, 0.01634, 0.01588, 0.01237, 0.01595, 0.01591]),
 ('dot_fp64', [0.01995, 0.02, 0.01422, 0.03286, 0.06079, 0.03542, 0.01269, 0.01987, 0.01379]),
 ('gemv_fp64',
  [0.01965, 0.01966, 0.01941, 0.01944, 0.0354, 0.03201, 0.03196, 0.03207, 0.02698]),
 ('gemm_fp64_64',
  [6.53e-05, 5.711e-05, 3.435e-05, 6.295e-05, 8.305e-05, 5.489e-05, 7.016e-05, 6.851e-05,
   6.601e-05]),
 ('gemm_fp64_256',
  [0.05207, 0.04831, 0.05201, 0.04402, 0.05192, 0.04, 0.05199, 0.04399, 0.04798]),
 ('gemm_fp64_1024', [0.145, 0.171, 0.196, 0.184, 0.128, 0.1039, 0.128, 0.176, 0.24]),
 ('gemm_fp32_1024', [0.1559, 0.1458, 0.1781, 0.184, 0.136, 0.148, 0.1426, 0.1413, 0.09469]),
 ('gemm_fp32_2048', [0.808, 0.8, 0.648, 0.744, 0.8641, 0.6879, 0.744, 0.7359, 0.528]),
 ('bgemm_fp32_32',
  [0.0005486, 0.0007622, 0.0005351, 0.0007154, 0.0003497, 0.0003635, 0.000423, 0.000398,
   0.0003124]),
 ('conv2d_fp32',
  [0.03349, 0.02383, 0.02476, 0.02614, 0.03335, 0.02772, 0.02491, 0.03555, 0.02948]),
 ('softmax_fp32', [0.1197, 0.1009, 0.1455, 0.1231, 0.1224, 0.1742, 0.1465, 0.1431, 0.2027]),
 ('layernorm_fp32', [0.2017, 0.2293, 0.2385, 0.22, 0.2401, 0.232, 0.2239, 0.2304, 0.166]),
 ('exp_fp32', [0.1366, 0.1188, 0.1346, 0.1151, 0.1253, 0.1191, 0.1329, 0.1407, 0.1316]),
 ('fft_c128', [0.5093, 0.68, 0.4556, 0.5129, 0.4252, 0.4183, 0.4534, 0.3635, 0.3507]),
 ('sort_fp64',
  [0.1332, 0.09914, 0.08645, 0.08798, 0.08186, 0.0923, 0.09014, 0.09967, 0.08795])]
