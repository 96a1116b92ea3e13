"""Review r2_torch F11: aten::_fused_rms_norm (one kernel on CUDA) has a trace rule
(ingest/torch_ops_rmsnorm.py) with the live counter's count (bench/torch_layer_rules.py)."""

from __future__ import annotations

from rooflab.ingest.torch_ops_base import OpCall
from rooflab.ingest.torch_ops_rmsnorm import RMSNORM_RULES

X = (8, 128, 512)   # 524,288 elements, 1,024 rows


def test_fused_rms_norm_forward_rule():
    call = OpCall("aten::_fused_rms_norm", (X, None, (512,), None),
                  ("float", "", "float", ""), ("", "[512]", "", "1e-06"))
    work = RMSNORM_RULES[call.name](call)
    # 4·524,288 + 2·1,024 = 2,099,200 (what F.rms_norm's CPU decomposition counts)
    assert work.flop == 2_099_200
    # x read, y written: 2·524,288·4 B; γ read 512·4 B
    assert work.bytes == 2 * 524_288 * 4 + 512 * 4
    no_weight = OpCall(call.name, (X, None, None, None), ("float", "", "", ""),
                       ("", "[512]", "", "1e-06"))
    assert RMSNORM_RULES[call.name](no_weight).flop == 3 * 524_288 + 2 * 1_024


def test_fused_rms_norm_backward_rule():
    call = OpCall("aten::_fused_rms_norm_backward",
                  (X, X, None, (8, 128, 1), (512,), None),
                  ("float", "float", "", "float", "float", ""),
                  ("", "", "[512]", "", "", "[True, True]"))
    work = RMSNORM_RULES[call.name](call)
    assert work.flop == 9 * 524_288   # x̂ 1, grad_input 5 + dy·γ 1, grad_weight 2
    # reads dy, x (2,097,152 B each), rstd 4,096, γ 2,048; writes dx 2,097,152 + dγ 2,048
    assert work.bytes == 2 * 2_097_152 + 4_096 + 2_048 + 2_097_152 + 2_048
