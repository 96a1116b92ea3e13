"""The NIC the network between nodes assumes, named for the device's own systems (session
32, helper E item 4). A CPU, or a maker with no system entry, was told it carries NVIDIA's
DGX NIC ("one 400 Gb/s NDR InfiniBand NIC per GPU (NVIDIA ConnectX-7: DGX H100 ...)": a
Graviton3, a Xeon, an Apple M4) or AMD's MI300X platform NICs (a Ryzen): now "one 400 Gb/s
NIC per device", of no brand, with how to give the real one. 400 Gb/s / 8 = 50 GB/s per
direction, the same figure as before: only the words change. NVIDIA's GPUs and AMD's
Instinct keep theirs."""

import pytest

from rooflab.hardware.catalog import lookup
from rooflab.model.comm_link import NDR_SOURCE
from rooflab.model.scale_out import assumed_network


@pytest.mark.parametrize("name", ["Graviton3", "Xeon 8480+", "Ryzen 9 7950X",
                                  "EPYC 9654", "Grace CPU", "M4 Max (40-core GPU)"])
def test_a_device_with_no_system_figure_gets_a_400g_nic_of_no_brand(name):
    link = assumed_network(lookup(name))
    assert link.bus_bytes_per_s == 50e9
    assert link.source.startswith("assumed: one 400 Gb/s NIC per device = 50 GB/s per "
                                  "direction (no system figure for this device")
    for brand in ("ConnectX", "NVIDIA", "DGX", "MI300X", "Pollara", "per GPU"):
        assert brand not in link.source, (name, brand)
    # while the GPUs keep their systems' NICs
    assert assumed_network(lookup("H100 SXM")).source == NDR_SOURCE
    mi300x = assumed_network(lookup("MI300X"))
    assert mi300x.source.startswith("assumed: one 400 Gb/s NIC per GPU = 50 GB/s")
    assert "Pensando Pollara 400, NVIDIA ConnectX-7 or Broadcom Thor 2" in mi300x.source
    assert "Slingshot-11" in assumed_network(lookup("MI250X")).source
