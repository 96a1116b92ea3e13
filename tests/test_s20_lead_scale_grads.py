"""scale --grad-dtype fp32 counts fp32 gradients in the memory line (review s20 r5 F5)."""
import json

from rooflab.cli.main import main


def test_fp32_gradients_reach_the_cli_memory(capsys):
    assert main(["scale", "--on", "H100 SXM", "--hidden", "8192", "--blocks", "80",
                 "--tokens", "4096", "--grad-dtype", "fp32", "--json"]) == 0
    memory = json.loads(capsys.readouterr().out)["memory"]
    params = 12 * 8192**2 * 80          # 4h^2 attention + 8h^2 MLP per block
    assert memory["params"] == params
    assert memory["weights_grads_bytes"] == 6 * params   # bf16 weights 2 B + fp32 grads 4 B
    assert memory["adam_bytes"] == 18 * params           # ZeRO's 16 B with fp32 gradients
