"""`rooflab scale`'s memory line: does one data-parallel replica fit on the device?

Data parallelism keeps the whole model on every device, so each holds the 12 h^2 x blocks
parameters' weights and gradients of --dtype (model/parallel.dp_block_params: the block
shapes the step is timed on; what the step model reads, writes and all-reduces), and an
Adam optimizer its state on top: 16 B per parameter in all, whether mixed precision
(2 + 2 + 12: an fp32 master copy and two fp32 moments) or fp32 (4 + 4 + 8) (Rajbhandari
et al., ZeRO, SC'20, section 3.1: "16 Psi bytes"). Activations are not counted. Review r3
F5: a 406 G-parameter model (812 GB of bf16 weights) was timed on one 80 GB H100 without
a word.
"""

from __future__ import annotations

from dataclasses import dataclass

# Adam in mixed precision or fp32: weights, gradients and optimizer state per parameter
ADAM_BYTES_PER_PARAM = 16.0


@dataclass(frozen=True)
class ReplicaMemory:
    params: float               # 12 h^2 x blocks (parallel.dp_block_params)
    dtype_bytes: float          # of --dtype: weights and gradients
    device_bytes: float | None  # the device's memory (None: not known)

    @property
    def weights_grads_bytes(self) -> float:
        """Weights + gradients of --dtype: the least a replica holds to take a step."""
        return 2 * self.dtype_bytes * self.params

    @property
    def adam_bytes(self) -> float:
        """Weights, gradients and Adam's state: 16 B per parameter."""
        return ADAM_BYTES_PER_PARAM * self.params


def replica_memory(params: float, dtype: str, on: str) -> ReplicaMemory:
    """`params` parameters of --dtype on the --on device."""
    from ..units import dtype_bytes

    return ReplicaMemory(params, dtype_bytes(dtype), _memory(on))


def _memory(on: str) -> float | None:
    """A catalog device's memory; None for a profile file or a CPU (whose catalog figure
    is the most the platform takes, not the RAM a server has)."""
    from ..errors import RooflabError
    from ..hardware.catalog import lookup
    from ..hardware.resolve import looks_like_file

    if looks_like_file(on):
        return None
    try:
        return lookup(on).fit_memory_bytes or None
    except RooflabError:
        return None


def memory_line(m: ReplicaMemory, dtype: str) -> str:
    """'memory per device: 6.44 G parameters: weights + gradients 25.8 GB (bf16), with
    Adam's state 103 GB (16 B/parameter); the device has 80 GB'."""
    from ..units import si

    has = (f"the device has {si(m.device_bytes, 'B')}" if m.device_bytes
           else "the device's memory is not known")
    return (f"memory per device (each data-parallel replica holds the whole model): "
            f"{si(m.params, '')} parameters: weights + gradients "
            f"{si(m.weights_grads_bytes, 'B')} ({dtype}), with Adam's state "
            f"{si(m.adam_bytes, 'B')} (16 B/parameter, ZeRO), activations not counted; {has}")


def memory_warning(m: ReplicaMemory) -> str | None:
    """The warning when a replica does not fit on the device; None when it does (or the
    device's memory is not known)."""
    from ..units import si

    mem = m.device_bytes
    if not mem or m.adam_bytes <= mem:
        return None
    if m.weights_grads_bytes > mem:
        return (f"the model does not fit: its weights + gradients alone are "
                f"{si(m.weights_grads_bytes, 'B')} > the device's {si(mem, 'B')}, and "
                f"data parallelism keeps them whole on every device; the step times assume "
                f"it fit (shard it: FSDP/ZeRO-3, tensor or pipeline parallelism; or fewer "
                f"--blocks/--hidden)")
    return (f"with Adam's state the model does not fit: {si(m.adam_bytes, 'B')} "
            f"(16 B/parameter) > the device's {si(mem, 'B')}; the step times assume it "
            f"fit (shard the optimizer state: ZeRO-1/2, FSDP)")
