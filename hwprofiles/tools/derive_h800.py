#!/usr/bin/env python3
"""Writes hwprofiles/profiles/h800.json: the h100 profile (calibrated on one H100, h100.calibrated.json)
with the H800's NVLink. The H800 is the H100 SXM5 die with 8 of its 18 NVLink 4 links enabled (400 GB/s
both directions = 200 per direction; DeepEP's README: "H800 (~160 GB/s NVLink maximum bandwidth)"), same
SMs, HBM and clocks, and in DeepSeek's and DeepEP's clusters one ConnectX-7 400 Gb/s NIC per GPU, as h100.
Every intra-node collective table scales by 8/18 (the link count; NCCL's 20.6 GB/s per link x 8 = 164.8,
DeepEP's ~160); step latencies, the network, inter-node tables and contention are h100's unchanged.
Run from the repository root: python3 hwprofiles/tools/derive_h800.py"""
import json

LINKS_H800, LINKS_H100 = 8, 18
SCALE = LINKS_H800 / LINKS_H100

p = json.load(open("hwprofiles/profiles/h100.calibrated.json"))
p["name"] = "h800"
p["description"] = ("HGX H800 node: 8x NVIDIA H800 SXM5 80GB (an H100 SXM5 with 8 of 18 NVLink 4 links), "
                    "one 400G ConnectX-7 NIC per GPU. Derived from the h100 profile by "
                    "hwprofiles/tools/derive_h800.py: NVLink and intra-node collective tables x 8/18; "
                    "everything else is h100's (calibrated on 1x H100).")
p["gpu"]["name"] = "NVIDIA H800 SXM5 80GB"
fabric = p["node"]["fabric"]
fabric["links_per_gpu"] = LINKS_H800
fabric["per_gpu_bw_GBps"] = fabric["link_bw_GBps"] * LINKS_H800
fabric["source"] = ("H800: 8 NVLink 4 links, 400 GB/s bidir = 200 per direction [D1]; usable 20.6 GB/s per link "
                    "as h100 (8 x 20.6 = 164.8, DeepEP's '~160 GB/s NVLink maximum bandwidth' [D1]); latency as h100")
for c in p["collectives"]:
    if c["scope"] != "intra":
        continue
    for point in c["busbw"]:
        point["GBps"] = round(point["GBps"] * SCALE, 3)
    c["source"] = "(D) h100's table x 8/18 (NVLink links of H800 over H100) [D1]; h100: " + c["source"]
prov = p["provenance"]
prov["kind"] = "published"
prov["sources"].append("[D1] DeepEP README (deepseek-ai/DeepEP, commit ebfe47e, docs/legacy.md): H800 with "
                       "~160 GB/s NVLink and one CX7 400 Gb/s RDMA NIC (~50 GB/s) per GPU; NVIDIA H800 "
                       "datasheet: NVLink 400 GB/s")
prov["sources"].insert(0, "[C0'] derived from h100.calibrated.json by hwprofiles/tools/derive_h800.py")
prov["device"] = "none: derived from 1x NVIDIA H100 80GB HBM3 measurements and the H800's NVLink"
with open("hwprofiles/profiles/h800.json", "w") as f:
    json.dump(p, f, indent=2)
    f.write("\n")
