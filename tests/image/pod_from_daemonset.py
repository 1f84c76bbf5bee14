#!/usr/bin/env python3
"""The shipped DaemonSet's pod template as a Pod `podman kube play` runs,
beside its ConfigMap, changed only where a test on a shared host must: the
listen port (in the flags and the probe), the host paths, the image's tag,
and no `ports:` (podman 4.3 refuses port mappings on the host's network,
where the port is the host's anyway).
Usage: pod_from_daemonset.py DAEMONSET.yml IMAGE PORT DCI_DIR LIBVIRT_DIR >POD.yml"""
import sys

import yaml

src, image, port, dci_dir, libvirt_dir = sys.argv[1:6]
docs = list(yaml.safe_load_all(open(src)))
cm = next(d for d in docs if d["kind"] == "ConfigMap")
ds = next(d for d in docs if d["kind"] == "DaemonSet")
tpl = ds["spec"]["template"]
pod = {"apiVersion": "v1", "kind": "Pod",
       "metadata": {"name": "binstat-image-test", "labels": tpl["metadata"]["labels"]},
       "spec": tpl["spec"]}
(c,) = pod["spec"]["containers"]
c["image"] = image
c["args"] = ["--web.listen-address=127.0.0.1:" + port if a.startswith("--web.listen-address") else a
             for a in c["args"]]
probe = c.pop("livenessProbe")["exec"]["command"]
probe[1] = port
print("# liveness: " + " ".join(probe))
c["readinessProbe"]["httpGet"]["port"] = int(port)
c.pop("ports")
paths = {"dci4": dci_dir, "libvirt-status": libvirt_dir}
for v in pod["spec"]["volumes"]:
    if "hostPath" in v:
        v["hostPath"]["path"] = paths[v["name"]]
cm["metadata"].pop("namespace")
yaml.safe_dump_all([cm, pod], sys.stdout, sort_keys=False)
