"""The network between nodes rooflab assumes when nobody measured or gave one, per catalog
device: what the systems that device ships in carry, with the source that says so. One
table for `rooflab scale`, `rooflab llm --tp/--pp` and `train --dp`, so that they agree.
Pure.

Each entry is one device's share (per direction): the NIC it has to itself, or a chip's
own ports (Gaudi) or its share of its host's NICs (TPU); node_network_link multiplies it
by the devices of a node (NCCL/RCCL run one ring per NIC). An entry also says how many
devices its systems' node holds (per_node: 8 on HGX/DGX and MI300X platforms, 4 on the
HPE Cray EX nodes of MI250X and MI300A and in an MI210 hive, 72 in a GB200 or GB300
NVL72 rack's NVLink domain), which `rooflab scale --per-node`, `rooflab llm
--tp/--pp` and `train --dp` take as the node's size where none is given.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..units import si
from .comm_link import NDR_BUS, Link, node_network_link, own_scale_out


@dataclass(frozen=True)
class ScaleOut:
    """One device's share of the network between nodes, assumed (nominal): bits/s per
    direction, what carries it, and the systems and source it stands for."""

    bits_per_s: float
    what: str            # "one 400 Gb/s NIC per GPU"
    where: str           # the systems and the source URL
    unit: str = "NIC"    # what carries one ring across nodes: "NIC" or "chip"
    per_node: int = 8    # devices in one node of those systems (HGX/DGX: 8)
    node: str = ""       # that node in words, where it is not an 8-GPU HGX/DGX one

    @property
    def bytes_per_s(self) -> float:
        return self.bits_per_s / 8

    def source(self) -> str:
        return (f"assumed: {self.what} = {si(self.bytes_per_s, 'B/s')} per direction "
                f"({self.where})")


# NVIDIA, and any roof with no catalog device (a profile file): comm_link.NDR_SOURCE's words
# (a test holds the two texts equal)
NVIDIA = ScaleOut(NDR_BUS * 8, "one 400 Gb/s NDR InfiniBand NIC per GPU",
                  "NVIDIA ConnectX-7: DGX H100 and DGX B200 carry '8x single-port NVIDIA "
                  "ConnectX-7 VPI, up to 400 Gb/s', one per GPU, "
                  "nvidia.com/en-us/data-center/dgx-b200")

# MI300X/MI325X/MI350X/MI355X platforms: AMD's own multi-node recipes give every GPU one
# 400G RDMA NIC, of any of three makers (the ROCm pages below); 400 Gb/s either way.
AMD_400G = ScaleOut(
    400e9, "one 400 Gb/s NIC per GPU",
    "AMD's MI300X/MI325X/MI355X cluster recipes pair each GPU with one 400G RDMA NIC: AMD "
    "Pensando Pollara 400, NVIDIA ConnectX-7 or Broadcom Thor 2, RoCE or InfiniBand "
    "(rocm.docs.amd.com/projects/ai-ecosystem/en/latest/inference/distributed/"
    "sglang-mori-recipe.html; rocm.docs.amd.com/en/latest/how-to/rocm-for-ai/inference/"
    "benchmark-docker/vllm-mori-distributed.html)")

# DGX A100: "8x Single-Port Mellanox ConnectX-6 VPI 200Gb/s HDR InfiniBand", one per GPU
A100_HDR = ("NVIDIA ConnectX-6: DGX A100 carries '8x Single-Port Mellanox ConnectX-6 VPI "
            "200Gb/s HDR InfiniBand', one per GPU, nvidia.com/content/dam/en-zz/Solutions/"
            "Data-Center/nvidia-dgx-a100-datasheet.pdf")
A100 = ScaleOut(200e9, "one 200 Gb/s HDR InfiniBand NIC per GPU", A100_HDR)
# A800 SXM: an A100 with NVLink cut to 400 GB/s, on the same 8-GPU HGX A100 board, whose
# servers carry eight GPU-dedicated NICs as DGX A100 does (was: the 400G NDR default)
A800 = ScaleOut(200e9, "one 200 Gb/s HDR InfiniBand NIC per GPU",
                f"A800 SXM = A100 SXM with NVLink cut (the catalog entry's note); its 8-GPU "
                f"HGX A100/A800 nodes carry eight GPU-dedicated NICs (besthub.dev/articles/"
                f"inside-the-gpu-server-architecture-of-a100-a800-and-h100-h800-nodes-"
                f"bbf940b6d50c, third-party), as {A100_HDR}")
# A100/A800 PCIe cards sit in PCIe Gen4 servers of any make: rooflab takes DGX A100's one
# 200 Gb/s HDR NIC per GPU, the most a Gen4 x16 card's slot feeds (a 400G NIC needs Gen5
# x16); a server with one NIC per 2 cards has half: --nics-per-node 4
A100_PCIE = ScaleOut(200e9, "one 200 Gb/s HDR InfiniBand NIC per GPU",
                     f"PCIe Gen4 servers: rooflab takes the reference system DGX A100, "
                     f"{A100_HDR}; a node's NIC bandwidth per card is held to what its "
                     f"PCIe slot carries, 200 Gb/s per Gen4 x16 A100 (naddod.com/blog/quick-"
                     f"understanding-gpu-server-network-card-configuration-in-ai-era); one "
                     f"NIC per 2 cards: --nics-per-node 4")
# DGX B300: one ConnectX-8 SuperNIC per GPU, 800 Gb/s (GB300 NVL72 the same NIC: GB300 below)
B300 = ScaleOut(800e9, "one 800 Gb/s ConnectX-8 NIC per GPU",
                "NVIDIA ConnectX-8: DGX B300 carries eight ConnectX-8 SuperNICs of 800 Gb/s on "
                "its GPU board, one per GPU (NVIDIA DGX B300 User Guide; "
                "nvidia.com/en-us/data-center/dgx-b300); GB300 NVL72 one ConnectX-8 800G per "
                "GPU, nvidia.com/en-us/data-center/gb300-nvl72")

# GB200 NVL72: one rack of 72 GPUs is one NVLink domain (1.8 TB/s per GPU, NVLink
# switch trays), 4 GPUs and their ConnectX-7 400G NICs per compute tray: rooflab's node
# for it is the rack, 72 GPUs; rows past 72 leave it over one 400G NIC per GPU
GB200 = ScaleOut(400e9, "one 400 Gb/s ConnectX-7 NIC per GPU",
                 "GB200 NVL72 '72x1': 18 compute trays of 4 GPUs with ConnectX-7 (CX7) and 9 "
                 "NVLink switch trays, all 72 GPUs in one NVLink domain (docs.nvidia.com/multi-"
                 "node-nvlink-systems/multi-node-tuning-guide/system.html); one 400G NIC per "
                 "GPU taken, 4 per tray as in the GB300 tray's 4 ConnectX-8 (docs.nvidia.com/"
                 "enterprise-reference-architectures/nvl72-ai-factory/latest/components.html)",
                 per_node=72, node="GB200 NVL72 rack of 72 GPUs in one NVLink domain")
# GB300 NVL72: the same rack of 72 GPUs in one NVLink domain (1.8 TB/s per GPU), each GPU
# with its own 800 Gb/s ConnectX-8 SuperNIC on the compute tray (4 per tray): the node is
# the rack, 72 GPUs; rows past 72 leave it over one 800G NIC per GPU (72 x 100 GB/s)
GB300 = ScaleOut(800e9, "one 800 Gb/s ConnectX-8 NIC per GPU",
                 "GB300 NVL72: 18 compute trays of 4 Blackwell Ultra GPUs and 4 ConnectX-8 "
                 "800G SuperNICs, 9 NVLink switch trays, all 72 GPUs in one NVLink domain "
                 "(docs.nvidia.com/enterprise-reference-architectures/nvl72-ai-factory/latest/"
                 "components.html; nvidia.com/en-us/data-center/gb300-nvl72: 'NVIDIA "
                 "ConnectX-8 SuperNIC', 800 Gb/s per GPU)",
                 per_node=72, node="GB300 NVL72 rack of 72 GPUs in one NVLink domain")

# MI250X and MI300A ship in HPE Cray EX blades with one 200 Gb/s Slingshot-11 NIC per
# package, four packages per node: rooflab's node for them holds 4, not 8
SLINGSHOT = ("one 200 Gb/s HPE Slingshot-11 NIC per {dev}",
             "as on the HPE Cray EX nodes of {systems}: 4 {dev}s and 4 NICs, one each, "
             "docs.cscs.ch/alps/hardware; '[4x] HPE Slingshot 200 Gbps (25 GB/s) NICs', "
             "docs.olcf.ornl.gov/systems/frontier_user_guide.html")
MI250X = ScaleOut(200e9, SLINGSHOT[0].format(dev="MI250X"),
                  SLINGSHOT[1].format(dev="MI250X", systems="Frontier, LUMI, Alps"),
                  per_node=4, node="HPE Cray EX235a node of 4 MI250X packages (8 GCDs, "
                  "each a device to software)")
MI300A = ScaleOut(200e9, SLINGSHOT[0].format(dev="MI300A"),
                  SLINGSHOT[1].format(dev="MI300A", systems="El Capitan, Alps"),
                  per_node=4, node="HPE Cray EX255a node of 4 MI300A APUs")

# MI210 (PCIe Gen4 cards): an Infinity Fabric Link bridge joins a hive of up to 4 (the
# catalog entry's [device.links]: 3 links each), so rooflab's node is one hive; no MI210
# platform NIC figure was found, so a Gen4 x16 card's 200 Gb/s (as A100 PCIe) stands in
# (was: 8 per node, 400 Gb/s, more than a Gen4 x16 slot carries)
MI210 = ScaleOut(200e9, "one 200 Gb/s NIC per GPU",
                 "no MI210 platform NIC figure found; 200 Gb/s, the most a PCIe Gen4 x16 "
                 "card's slot feeds (naddod.com/blog/quick-understanding-gpu-server-network-"
                 "card-configuration-in-ai-era), taken for it", per_node=4,
                 node="4-GPU MI210 hive on one Infinity Fabric Link bridge (amd.com/en/"
                 "products/accelerators/instinct/mi200/mi210.html; a server of 8 cards "
                 "holds two hives joined over PCIe: --per-node 8)")

# TPU slices reach each other through their hosts' data-center network (DCN), not ICI
# (cloud.google.com/tpu/docs/multislice-introduction); per chip:
TPU_V5P = ScaleOut(50e9, "the data-center network (DCN), 50 Gb/s per chip",
                   "Google: 'Data center network (DCN) bandwidth per chip (Gbps) | 50', "
                   "cloud.google.com/tpu/docs/v5p-training; slices talk over DCN, not ICI",
                   "chip")
TPU_V5E = ScaleOut(25e9, "the data-center network (DCN), 25 Gb/s per chip",
                   "Google: 'Per-host NIC configuration | 2 x 100 Gbps NIC' for 8 chips per "
                   "host, cloud.google.com/tpu/docs/v5e; slices talk over DCN, not ICI",
                   "chip")
TPU_V4 = ScaleOut(50e9, "the data-center network (DCN), 50 Gb/s per chip",
                  "Google gives no v4 DCN figure (cloud.google.com/tpu/docs/v4): v5p's 50 Gb/s "
                  "per chip (cloud.google.com/tpu/docs/v5p-training) taken for it; slices talk "
                  "over DCN, not ICI", "chip")

# Any other device (a CPU, of any maker; an accelerator of a maker with no entry here):
# no system figure to cite, so neither NVIDIA's DGX NIC nor AMD's MI300X recipes, which a
# Graviton and a Ryzen were told they carry (session 32): a 400 Gb/s NIC of no brand
OTHER = ScaleOut(400e9, "one 400 Gb/s NIC per device",
                 "no system figure for this device: a 400 Gb/s RoCE or InfiniBand NIC of "
                 "any maker taken for it, as GPU clusters carry; give yours with --inter-bw "
                 "(`rooflab scale`) or --link-bw (`rooflab llm`)")

# first match of the catalog name wins; then the vendor's default (its GPUs and
# accelerators; a CPU takes OTHER)
BY_NAME = (("MI250X", MI250X), ("MI300A", MI300A), ("MI210", MI210), ("TPU v5p", TPU_V5P),
           ("TPU v5e", TPU_V5E), ("TPU v4", TPU_V4), ("A100 40GB SXM", A100),
           ("A100 80GB SXM", A100), ("A800 80GB SXM", A800), ("A100 40GB PCIe", A100_PCIE),
           ("A100 80GB PCIe", A100_PCIE), ("A800 80GB PCIe", A100_PCIE), ("GB200", GB200),
           ("GB300", GB300), ("B300", B300))   # GB300 before B300: "GB300" holds "B300"
BY_VENDOR = {"AMD": AMD_400G}


def scale_out_of(device: Any) -> ScaleOut:
    """The assumed network share of a catalog device (None, a file's roof: NVIDIA's; a
    CPU, or a maker with no entry: OTHER)."""
    if device is None:
        return NVIDIA
    name = str(getattr(device, "name", ""))
    for key, entry in BY_NAME:
        if key in name:
            return entry
    vendor = str(getattr(device, "vendor", ""))
    if getattr(device, "kind", "gpu") == "cpu" or vendor not in (*BY_VENDOR, "NVIDIA", ""):
        return OTHER
    return BY_VENDOR.get(vendor, NVIDIA)


def devices_per_node(device: Any) -> int:
    """The devices one node holds in the systems the device ships in (8 where unknown:
    an HGX/DGX node); `--per-node` overrides it."""
    return scale_out_of(device).per_node


def node_words(device: Any) -> str:
    """That node in words, for "more than one ...": "8-GPU node", or the system's own
    ("HPE Cray EX255a node of 4 MI300A APUs")."""
    entry = scale_out_of(device)
    return entry.node or f"{entry.per_node}-GPU node"


def network_unit(device: Any) -> str:
    """What carries one ring across nodes: a NIC, or a chip's own share (Gaudi, TPU)."""
    if device is not None and own_scale_out(device) is not None:
        return "chip"
    return scale_out_of(device).unit


def assumed_network(device: Any = None, hop_latency_s: float = 0.0, why: str = "") -> Link:
    """One device's link between nodes when nothing was measured or given: a Gaudi's own
    scale-out ports (own_scale_out), else the table's entry for it; `why` joins the source."""
    own = own_scale_out(device, hop_latency_s) if device is not None else None
    if own is None:
        entry = scale_out_of(device)
        own = Link("network", entry.bytes_per_s, hop_latency_s, entry.source())
    if why:
        return Link(own.level, own.bus_bytes_per_s, own.hop_latency_s, f"{own.source}; {why}")
    return own


def node_network(device: Any, why: str = "") -> Link:
    """The network a ring past one node of `device` runs on: assumed_network's link once
    per NIC (or chip) of the node, one ring each (comm_link.node_network_link), the node
    devices_per_node's; `rooflab llm --tp` and its measured-profile path both take it."""
    return node_network_link(assumed_network(device, why=why), devices_per_node(device),
                             network_unit(device))
