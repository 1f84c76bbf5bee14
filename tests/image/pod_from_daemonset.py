#!/usr/bin/env python3
"""The shipped DaemonSet's pod template as a Pod `podman kube play` runs,
beside its ConfigMap, changed only where a test on a shared host must: the
pod's name (one a run), the host paths and the image's tag. It refuses a
template without hostPID: true (exit 1), which podman 4.3 would not notice
(it reads no hostPID: the test's containers.conf gives the host's PID
namespace in its stead, and only for a template that asks it).
Usage: pod_from_daemonset.py DAEMONSET.yml IMAGE POD_NAME DCI_DIR >POD.yml"""
import sys

import yaml

src, image, name, dci_dir = sys.argv[1:5]
docs = list(yaml.safe_load_all(open(src)))
cm = next(d for d in docs if d["kind"] == "ConfigMap")
ds = next(d for d in docs if d["kind"] == "DaemonSet")
tpl = ds["spec"]["template"]
if tpl["spec"].get("hostPID") is not True:
    sys.exit("pod_from_daemonset.py: the DaemonSet's pod template lacks hostPID: true")
pod = {"apiVersion": "v1", "kind": "Pod",
       "metadata": {"name": name, "labels": tpl["metadata"]["labels"]},
       "spec": tpl["spec"]}
(c,) = pod["spec"]["containers"]
c["image"] = image
probe = c.pop("livenessProbe")["exec"]["command"]
print("# liveness: " + " ".join(probe))
paths = {"dci4": dci_dir}
for v in pod["spec"]["volumes"]:
    if "hostPath" in v:
        v["hostPath"]["path"] = paths[v["name"]]
cm["metadata"].pop("namespace")
yaml.safe_dump_all([cm, pod], sys.stdout, sort_keys=False)
