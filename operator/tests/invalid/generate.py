#!/usr/bin/env python3
"""Regenerates the invalid-manifest corpus in this directory from the checked-in CRDs.

One file per schema enum, minimum and maximum (found by walking the CRDs, so a new range gets a
file on the next run) and one per CEL rule (listed in CEL_CASES below: a new rule needs a new
entry, and `cargo test -p model-fleet-operator --test invalid_corpus` fails until it has one).

Each file starts with a header the tests read:
    # covers: cel | enum | minimum | maximum | pattern
    # expect-path: spec.replicas.min          (the field path the API server reports)
    # expect-message: must not exceed         (a fragment of the API server's message)
    # expect-message-provider: should match   (only where the provider's message differs: a quantity is a string in
                                              #  Terraform, so a number below `minimum` reaches it as a string)
    # update: true                            (only for transition rules: the first document is
                                              #  created, the second is the refused update)
Run from the repository root:  python3 operator/tests/invalid/generate.py
"""
import copy
import os
import re
import sys

import yaml

ROOT = os.path.dirname(os.path.abspath(__file__))
CRDS = os.path.join(ROOT, "../../../charts/model-fleet-operator/crds")

SHAPE = {
    "layers": 2, "kvHeads": 1, "attentionHeads": 2, "hiddenSize": 16, "headDim": 8, "dtype": "bf16",
    "contextTokens": 1024, "sequences": 1,
}
GPU = {
    "count": 1,
    "fit": {
        "modules": [{"name": "m", "weightsGiB": 1, "kvCache": {"fromShape": SHAPE}, "placement": "sharded"}],
        "shards": 1,
        "runtimeGiB": 1,
        "marginPercent": 10,
    },
    "products": ["NVIDIA-L4"],
    "tolerations": [{"key": "k", "operator": "Exists", "effect": "NoSchedule"}],
}
# A queue trigger (KEDA redis scaler) for the scaling cases.
QUEUE = {"type": "redis", "metadata": {"address": "redis:6379", "listName": "q", "listLength": "8"}}
RESOURCES = {"requests": {"cpu": "1", "memory": "1Gi"}, "limits": {"memory": "2Gi"}}
INIT = [{"name": "init", "image": "busybox", "env": [{"name": "A", "value": "1"}],
         "resources": copy.deepcopy(RESOURCES)}]
VOLUMES = [{"name": "scratch", "mountPath": "/scratch", "emptyDir": {"medium": "Memory", "sizeLimit": "1Gi"}}]

# A valid manifest per kind with every optional object present, so any field can be set.
FULL = {
    "InferenceService": {
        "apiVersion": "modelfleet.io/v1alpha1",
        "kind": "InferenceService",
        "metadata": {"name": "invalid"},
        "spec": {
            "intent": "automatic",
            "model": {"name": "m", "revision": "main", "servedName": "m"},
            "container": {
                "image": "img",
                "port": 8000,
                "readinessPath": "/health",
                "startupProbe": {"path": "/health", "timeoutSeconds": 600},
                "env": [{"name": "A", "value": "1"}],
                "resources": copy.deepcopy(RESOURCES),
            },
            "initContainers": INIT,
            "volumes": VOLUMES,
            "gpu": GPU,
            "replicas": {"min": 1, "max": 2, "idleReplicaCount": 0},
            "scaling": {
                "pollingInterval": 30,
                "cooldownPeriod": 300,
                "initialCooldownPeriod": 0,
                "triggers": [
                    {
                        "type": "kafka",
                        "metadata": {"topic": "t"},
                        "metricType": "AverageValue",
                        "authenticationRef": {"name": "a", "kind": "TriggerAuthentication"},
                    }
                ],
                "http": {
                    "targetConcurrency": 10,
                    "targetRequestsPerSecond": 5,
                    "coldStartTimeoutSeconds": 600,
                    "requestTimeoutSeconds": 900,
                },
            },
            "gateway": {"hostnames": ["model.localhost"], "pathPrefix": "/"},
            "schedule": {"suspendAfterIdleSeconds": 600},
            "podSecurity": {"level": "restricted", "runAsUser": 1000, "runAsGroup": 1000, "fsGroup": 1000},
        },
    },
    "TrainingRun": {
        "apiVersion": "modelfleet.io/v1alpha1",
        "kind": "TrainingRun",
        "metadata": {"name": "invalid"},
        "spec": {
            "intent": "automatic",
            "container": {"image": "img", "env": [{"name": "A", "value": "1"}], "resources": copy.deepcopy(RESOURCES)},
            "initContainers": INIT,
            "volumes": VOLUMES,
            "gpu": GPU,
            "parallelism": 1,
            "completions": 2,
            "completionMode": "Indexed",
            "retries": 1,
            "deadlineSeconds": 60,
            "ttlSecondsAfterFinished": 60,
            "datasets": [{"name": "d", "version": "1", "mountPath": "/d"}],
            "podSecurity": {"level": "restricted", "runAsUser": 1000, "runAsGroup": 1000, "fsGroup": 1000},
        },
    },
    "Dataset": {
        "apiVersion": "modelfleet.io/v1alpha1",
        "kind": "Dataset",
        "metadata": {"name": "invalid"},
        "spec": {
            "version": "1",
            "source": {"uri": "s3://b/d"},
            "splits": {"train": {"uri": "s3://b/d/train", "records": 10}},
            "description": "d",
            "allowedServiceAccounts": ["default"],
        },
    },
}
SHORT = {"InferenceService": "isvc", "TrainingRun": "trun", "Dataset": "mfds"}


def base(kind, **spec):
    """A minimal valid manifest of `kind` with `spec` fields merged in."""
    minimal = {
        "InferenceService": {"model": {"name": "m"}, "container": {"image": "img"}},
        "TrainingRun": {"container": {"image": "img"}},
        "Dataset": {"version": "1", "source": {"uri": "s3://b/d"}},
    }[kind]
    s = copy.deepcopy(minimal)
    s.update(copy.deepcopy(spec))
    return {"apiVersion": "modelfleet.io/v1alpha1", "kind": kind, "metadata": {"name": "invalid"}, "spec": s}


def with_spec(doc, **spec):
    d = copy.deepcopy(doc)
    for k, v in spec.items():
        if v is None:
            d["spec"].pop(k, None)
        else:
            d["spec"][k] = v
    return d


def cel_cases():
    """(file stem, path, message fragment, documents): one per CEL rule location."""
    cases = []
    for kind in ("InferenceService", "TrainingRun"):
        s = SHORT[kind]
        both = {"name": "A", "value": "1", "secretKeyRef": {"name": "s", "key": "k"}}
        cases.append((f"{s}-container-env-one-source", "spec.container.env[0]", "set at most one of value",
                      [base(kind, container={"image": "img", "env": [both]})]))
        cases.append((f"{s}-init-env-one-source", "spec.initContainers[0].env[0]", "set at most one of value",
                      [base(kind, initContainers=[{"name": "i", "image": "img", "env": [both]}])]))
        cases.append((f"{s}-volume-no-source", "spec.volumes[0]", "set exactly one of emptyDir",
                      [base(kind, volumes=[{"name": "v", "mountPath": "/v"}])]))
        cases.append((f"{s}-volume-two-sources", "spec.volumes[0]", "set exactly one of emptyDir",
                      [base(kind, volumes=[{"name": "v", "mountPath": "/v", "emptyDir": {}, "secret": {"secretName": "s"}}])]))
        def kv(shape=None, **module):
            m = {"name": "m", "weightsGiB": 1, "placement": "sharded", "kvCache": {"fromShape": shape or SHAPE}}
            m.update(module)
            return base(kind, gpu={"count": 1, "fit": {"modules": [m]}})
        shape = lambda **kw: {k: v for k, v in {**SHAPE, **kw}.items() if v is not None}
        fs = "spec.gpu.fit.modules[0].kvCache.fromShape"
        cases.append((f"{s}-gpu-fit-module-kv-twice", "spec.gpu.fit.modules[0]", "set at most one of kvCacheGiB, kvCache",
                      [kv(kvCacheGiB=1)]))
        cases.append((f"{s}-gpu-fit-kv-dtype-missing", fs, "set exactly one of dtype, dtypeBytes",
                      [kv(shape(dtype=None))]))
        cases.append((f"{s}-gpu-fit-kv-head-dim-missing", fs, "set headDim (head_dim), or hiddenSize and attentionHeads",
                      [kv(shape(headDim=None, hiddenSize=None))]))
        cases.append((f"{s}-gpu-fit-kv-hidden-not-multiple", f"{fs}.hiddenSize", "hiddenSize must be a multiple of attentionHeads",
                      [kv(shape(headDim=None, hiddenSize=10, attentionHeads=4, kvHeads=1))]))
        cases.append((f"{s}-gpu-fit-kv-heads-not-grouped", f"{fs}.kvHeads", "attentionHeads must be a multiple of kvHeads",
                      [kv(shape(attentionHeads=6, kvHeads=4))]))
        cases.append((f"{s}-pod-security-root-under-restricted", "spec.podSecurity.runAsUser", "0 is root",
                      [base(kind, podSecurity={"level": "restricted", "runAsUser": 0})]))
        env_twice = [{"name": "A", "value": "1"}, {"name": "A", "value": "2"}]
        cases.append((f"{s}-container-env-duplicate", "spec.container.env", "container.env: two entries have the same name",
                      [base(kind, container={"image": "img", "env": env_twice})]))
        cases.append((f"{s}-init-env-duplicate", "spec.initContainers[0].env", "initContainers[].env: two entries have the same name",
                      [base(kind, initContainers=[{"name": "i", "image": "img", "env": env_twice}])]))
        cases.append((f"{s}-container-env-reserved-name", "spec.container.env[0].name", "names starting MODEL_FLEET_ are reserved",
                      [base(kind, container={"image": "img", "env": [{"name": "MODEL_FLEET_PORT", "value": "9000"}]})]))
        cases.append((f"{s}-init-env-reserved-name", "spec.initContainers[0].env[0].name", "names starting MODEL_FLEET_ are reserved",
                      [base(kind, initContainers=[{"name": "i", "image": "img", "env": [{"name": "MODEL_FLEET_X", "value": "1"}]}])]))
        cases.append((f"{s}-init-named-main", "spec.initContainers[0].name", "main is the name of the main container",
                      [base(kind, initContainers=[{"name": "main", "image": "img"}])]))
        cases.append((f"{s}-init-duplicate", "spec.initContainers", "initContainers: two entries have the same name",
                      [base(kind, initContainers=[{"name": "i", "image": "img"}, {"name": "i", "image": "img"}])]))
        cases.append((f"{s}-volume-reserved-name", "spec.volumes[0].name", "reserved for the operator's volumes",
                      [base(kind, volumes=[{"name": "dshm", "mountPath": "/v", "emptyDir": {}}])]))
        cases.append((f"{s}-volume-duplicate-name", "spec.volumes", "volumes: two entries have the same name",
                      [base(kind, volumes=[{"name": "v", "mountPath": "/a", "emptyDir": {}},
                                           {"name": "v", "mountPath": "/b", "emptyDir": {}}])]))
        cases.append((f"{s}-volume-duplicate-mount-path", "spec.volumes", "volumes: two entries have the same mountPath",
                      [base(kind, volumes=[{"name": "a", "mountPath": "/v", "emptyDir": {}},
                                           {"name": "b", "mountPath": "/v", "emptyDir": {}}])]))
        shm = "a pod with more than one GPU (gpu.count > 1) gets writable shared memory at /dev/shm"
        cases.append((f"{s}-shared-memory-read-only", "spec.volumes", shm,
                      [base(kind, gpu={"count": 2}, volumes=[{"name": "shm", "mountPath": "/dev/shm", "readOnly": True,
                                                               "emptyDir": {"medium": "Memory"}}])]))
        cases.append((f"{s}-shared-memory-config-map", "spec.volumes", shm,
                      [base(kind, gpu={"count": 2}, volumes=[{"name": "shm", "mountPath": "/dev/shm/",
                                                               "configMap": {"name": "c"}}])]))
        def tol(**t):
            return base(kind, gpu={"count": 1, "tolerations": [t]})
        tp = "spec.gpu.tolerations[0]"
        cases.append((f"{s}-toleration-empty-key-not-exists", f"{tp}.operator", "operator must be Exists when key is empty",
                      [tol(operator="Equal", value="v")]))
        cases.append((f"{s}-toleration-exists-with-value", f"{tp}.value", "value must be empty when operator is Exists",
                      [tol(key="k", operator="Exists", value="v")]))
        cases.append((f"{s}-toleration-seconds-not-no-execute", f"{tp}.tolerationSeconds", "allowed only with effect NoExecute",
                      [tol(key="k", operator="Exists", effect="NoSchedule", tolerationSeconds=60)]))
        long_prefix = ".".join(["a" * 63] * 4) + "/k"  # a 255-character prefix: each part is a valid label
        cases.append((f"{s}-toleration-key-prefix-too-long", f"{tp}.key", "prefix before '/' must be at most 253",
                      [tol(key=long_prefix, operator="Exists")]))
        cases.append((f"{s}-node-selector-key-prefix-too-long", "spec.gpu.nodeSelector",
                      "gpu.nodeSelector: every key must be a qualified name",
                      [base(kind, gpu={"count": 1, "nodeSelector": {long_prefix: "x"}})]))
        cases.append((f"{s}-node-selector-key", "spec.gpu.nodeSelector", "gpu.nodeSelector: every key must be a qualified name",
                      [base(kind, gpu={"count": 1, "nodeSelector": {"a b": "x"}})]))
        cases.append((f"{s}-node-selector-value", "spec.gpu.nodeSelector", "gpu.nodeSelector: every value must be a label value",
                      [base(kind, gpu={"count": 1, "nodeSelector": {"pool": "a b"}})]))
        def with_resources(where, resources, **spec):
            """A spec whose main (`container`) or first init (`init`) container has `resources`, and its path."""
            if where == "container":
                return base(kind, container={"image": "img", "resources": resources}, **spec), "spec.container.resources"
            doc = base(kind, initContainers=[{"name": "i", "image": "img", "resources": resources}], **spec)
            return doc, "spec.initContainers[0].resources"
        for where, field in (("container", "requests"), ("container", "limits"), ("init", "requests"), ("init", "limits")):
            doc, path = with_resources(where, {field: {"cpu cores": "1"}})
            cases.append((f"{s}-{where}-{field}-key", f"{path}.{field}", f"resources.{field}: every key must be a qualified name",
                          [doc]))
            doc, path = with_resources(where, {field: {"memroy": "1Gi"}})
            cases.append((f"{s}-{where}-{field}-not-standard", f"{path}.{field}",
                          f"resources.{field}: a name without '/' must be cpu, memory", [doc]))
        for where in ("container", "init"):
            doc, path = with_resources(where, {"requests": {"cpu": "1", "example.com/device": "1"}})
            cases.append((f"{s}-{where}-device-request-without-limit", f"{path}.limits",
                          "resources.limits: an extended resource (example.com/device) or huge pages in resources.requests "
                          "need a limit", [doc]))
            doc, path = with_resources(where, {"requests": {"hugepages-2Mi": "4Mi"}, "limits": {"hugepages-2Mi": "4Mi"}})
            cases.append((f"{s}-{where}-huge-pages-alone", path,
                          "resources: huge pages need a cpu or memory request or limit", [doc]))
        device_prefix = ".".join(["a" * 60] * 3 + ["a" * 62])  # 245 characters, one more than requests.<name> allows
        for stem, resource_name in (("quota-prefix", "requests.example.com/gpu"), ("prefix-too-long", device_prefix + "/g")):
            cases.append((f"{s}-gpu-resource-name-{stem}", "spec.gpu.resourceName",
                          "gpu.resourceName: an extended resource name's DNS prefix is at most 244",
                          [base(kind, gpu={"count": 1, "resourceName": resource_name})]))
        doc, path = with_resources("init", {"limits": {device_prefix + "/fpga": "1"}})
        cases.append((f"{s}-init-limits-device-prefix-too-long", f"{path}.limits",
                      "resources.limits: a name without '/' must be cpu, memory", [doc]))
        cases.append((f"{s}-gpu-fit-needs-count", "spec.gpu.count", "gpu.count must be at least 1",
                      [base(kind, gpu={"count": 0, "fit": {"modules": [{"name": "m", "weightsGiB": 1, "placement": "sharded"}]}})]))
    i = "InferenceService"
    cases += [
        ("isvc-replicas-min-above-max", "spec.replicas.min", "replicas.min must not exceed replicas.max",
         [base(i, replicas={"min": 3, "max": 2})]),
        ("isvc-idle-not-below-min", "spec.replicas.idleReplicaCount", "must be below replicas.min",
         [base(i, replicas={"min": 0, "idleReplicaCount": 0})]),
        ("isvc-cpu-trigger-metric-type-value", "spec.scaling.triggers[0].metricType", "accept only Utilization or AverageValue",
         [base(i, container={"image": "img", "resources": {"requests": {"cpu": "1"}}},
               scaling={"triggers": [{"type": "cpu", "metadata": {"value": "50"}, "metricType": "Value"}]})]),
        ("isvc-cpu-trigger-needs-request", "spec.scaling.triggers", "needs container.resources.requests",
         [base(i, scaling={"triggers": [{"type": "cpu", "metadata": {"value": "50"}, "metricType": "Utilization"}]})]),
        ("isvc-cpu-trigger-cannot-reach-zero", "spec.replicas", "cannot scale to zero",
         [base(i, container={"image": "img", "resources": {"requests": {"memory": "1Gi"}}}, replicas={"min": 0, "max": 3},
               scaling={"triggers": [{"type": "memory", "metadata": {"value": "50"}, "metricType": "Utilization"}]})]),
        ("isvc-suspend-after-idle-needs-triggers", "spec.schedule.suspendAfterIdleSeconds", "needs scaling.triggers",
         [base(i, schedule={"suspendAfterIdleSeconds": 600})]),
        ("isvc-gateway-path-prefix-not-plain", "spec.gateway.pathPrefix", "must not contain '//'",
         [base(i, gateway={"hostnames": ["m.example.test"], "pathPrefix": "/models//llama"})]),
        ("isvc-gateway-hostname-ip", "spec.gateway.hostnames", "an IP address is not a hostname",
         [base(i, gateway={"hostnames": ["m.example.test", "10.0.0.1"]})]),
        ("isvc-http-needs-gateway", "spec.scaling.http", "scaling.http needs gateway",
         [base(i, scaling={"http": {}})]),
        ("isvc-http-request-timeout-below-cold-start", "spec.scaling.http.requestTimeoutSeconds",
         "must exceed coldStartTimeoutSeconds",
         [base(i, gateway={"hostnames": ["m.example.test"]}, scaling={"http": {"requestTimeoutSeconds": 300}})]),
        ("isvc-trigger-names-duplicate", "spec.scaling.triggers", "two triggers have the same name",
         [base(i, scaling={"triggers": [dict(QUEUE, name="q"), dict(QUEUE, name="q")]})]),
        ("isvc-trigger-named-http", "spec.scaling.triggers", "http is the name of the trigger scaling.http adds",
         [base(i, gateway={"hostnames": ["m.example.test"]}, scaling={"http": {}, "triggers": [dict(QUEUE, name="http")]})]),
        ("isvc-trigger-utilization-not-cpu", "spec.scaling.triggers[0].metricType", "Utilization is only for cpu and memory",
         [base(i, scaling={"triggers": [dict(QUEUE, metricType="Utilization")]})]),
    ]
    t = "TrainingRun"
    cases += [
        ("trun-dataset-writable", "spec.datasets[0].readOnly", "dataset mounts are always read-only",
         [base(t, datasets=[{"name": "d", "version": "1", "mountPath": "/d", "readOnly": False}])]),
        ("trun-parallelism-above-completions", "spec.parallelism", "must not exceed spec.completions",
         [base(t, parallelism=3, completions=2)]),
        ("trun-dataset-duplicate-mount-path", "spec.datasets", "datasets: two entries have the same mountPath",
         [base(t, datasets=[{"name": "d", "version": "1", "mountPath": "/d"}, {"name": "e", "version": "1", "mountPath": "/d"}])]),
        ("trun-dataset-mount-path-of-a-volume", "spec.datasets", "a dataset's mountPath is also a volume's mountPath",
         [base(t, datasets=[{"name": "d", "version": "1", "mountPath": "/v"}],
               volumes=[{"name": "v", "mountPath": "/v", "emptyDir": {}}])]),
        ("trun-shared-memory-dataset", "spec.datasets", "gets writable shared memory at /dev/shm",
         [base(t, gpu={"count": 2}, datasets=[{"name": "d", "version": "1", "mountPath": "/dev/shm"}])]),
        ("trun-indexed-needs-completions", "spec.completions", "required when completionMode is Indexed",
         [base(t, completionMode="Indexed")]),
    ]
    cancelled = base(t, cancel=True)
    cases += [
        ("trun-cancel-undone", "spec.cancel", "cannot be undone", [cancelled, with_spec(cancelled, cancel=False)]),
        ("trun-cancel-removed", "spec.cancel", "cannot be undone", [cancelled, with_spec(cancelled, cancel=None)]),
        ("trun-intent-after-cancel", "spec.intent", "immutable after spec.cancel",
         [cancelled, with_spec(cancelled, intent="active")]),
    ]
    # Immutability: one case per field, alternating change / add / remove so all three are covered.
    full_t = FULL[t]
    changes = {
        "container": {"image": "other"},
        "initContainers": [{"name": "other", "image": "img"}],
        "volumes": [{"name": "other", "mountPath": "/o", "emptyDir": {}}],
        "gpu": {"count": 2},
        "parallelism": 2,
        "completions": 3,
        "completionMode": "NonIndexed",
        "retries": 5,
        "deadlineSeconds": 120,
        "ttlSecondsAfterFinished": 120,
        "serviceAccountName": "other",
        "automountServiceAccountToken": True,
        "datasets": [{"name": "d", "version": "2", "mountPath": "/d"}],
    }
    for n, (field, new) in enumerate(sorted(changes.items())):
        old = copy.deepcopy(full_t)
        if field in ("serviceAccountName", "automountServiceAccountToken"):
            # added: absent in the created object
            docs = [old, with_spec(old, **{field: new})]
            how = "added"
        elif n % 2 == 1 and field not in ("container",) and field in old["spec"]:
            docs = [old, with_spec(old, **{field: None})]
            how = "removed"
            if field in ("completions",):
                docs = [with_spec(old, completionMode=None), with_spec(old, completionMode=None, completions=None)]
            if field == "completionMode":
                docs = [old, with_spec(old, completionMode=None)]
        else:
            docs = [old, with_spec(old, **{field: new})]
            how = "changed"
        cases.append((f"trun-immutable-{field}-{how}", f"spec.{field}", f"spec.{field} is immutable", docs))
    # podSecurity: added after creation, the common edit (kept out of the alternation above).
    without = with_spec(full_t, podSecurity=None)
    cases.append(("trun-immutable-podSecurity-added", "spec.podSecurity", "spec.podSecurity is immutable",
                  [without, full_t]))
    d = "Dataset"
    full_d = FULL[d]
    ds_cases = [
        ("version", "changed", with_spec(full_d, version="2")),
        ("source", "changed", with_spec(full_d, source={"uri": "s3://other"})),
        ("format", "added", with_spec(full_d, format="parquet")),
        ("splits", "removed", with_spec(full_d, splits=None)),
        ("description", "removed", with_spec(full_d, description=None)),
        ("pvc", "added", with_spec(full_d, pvc={"claimName": "c"})),
    ]
    for field, how, new in ds_cases:
        cases.append((f"mfds-immutable-{field}-{how}", f"spec.{field}", f"spec.{field} is immutable", [full_d, new]))
    return cases


def pattern_cases():
    """(file stem, path, message fragment, documents): names Kubernetes checks on the rendered pod, as patterns."""
    cases = []
    for kind in ("InferenceService", "TrainingRun"):
        s = SHORT[kind]
        cases += [
            (f"{s}-service-account-name-pattern", "spec.serviceAccountName", "should match",
             [base(kind, serviceAccountName="Not_A_Name")]),
            (f"{s}-priority-class-name-pattern", "spec.gpu.priorityClassName", "should match",
             [base(kind, gpu={"count": 1, "priorityClassName": "High Priority"})]),
            (f"{s}-gpu-resource-name-pattern", "spec.gpu.resourceName", "should match",
             [base(kind, gpu={"count": 1, "resourceName": "gpu"})]),
            (f"{s}-toleration-key-pattern", "spec.gpu.tolerations[0].key", "should match",
             [base(kind, gpu={"count": 1, "tolerations": [{"key": "a b", "operator": "Exists"}]})]),
            (f"{s}-toleration-value-pattern", "spec.gpu.tolerations[0].value", "should match",
             [base(kind, gpu={"count": 1, "tolerations": [{"key": "k", "value": "a b"}]})]),
            (f"{s}-env-secret-name-pattern", "spec.container.env[0].secretKeyRef.name", "should match",
             [base(kind, container={"image": "img", "env": [
                 {"name": "A", "secretKeyRef": {"name": "My Secret", "key": "k"}}]})]),
            (f"{s}-env-config-map-key-pattern", "spec.container.env[0].configMapKeyRef.key", "should match",
             [base(kind, container={"image": "img", "env": [
                 {"name": "A", "configMapKeyRef": {"name": "settings", "key": "../etc/passwd"}}]})]),
            (f"{s}-volume-secret-name-pattern", "spec.volumes[0].secret.secretName", "should match",
             [base(kind, volumes=[{"name": "v", "mountPath": "/v", "secret": {"secretName": "My_Secret"}}])]),
            (f"{s}-volume-config-map-name-pattern", "spec.volumes[0].configMap.name", "should match",
             [base(kind, volumes=[{"name": "v", "mountPath": "/v", "configMap": {"name": "Settings"}}])]),
            (f"{s}-gpu-product-pattern", "spec.gpu.products[0]", "should match",
             [base(kind, gpu={"count": 1, "products": ["NVIDIA A100 80GB"]})]),
            (f"{s}-container-image-pattern", "spec.container.image", "should match",
             [base(kind, container={"image": " python:3.12 "})]),
            (f"{s}-init-image-pattern", "spec.initContainers[0].image", "should match",
             [base(kind, initContainers=[{"name": "fetch", "image": "busybox\t"}])]),
            (f"{s}-container-image-no-break-space", "spec.container.image", "should match",
             [base(kind, container={"image": "python:3.12\u00a0"})]),
            (f"{s}-init-image-vertical-tab", "spec.initContainers[0].image", "should match",
             [base(kind, initContainers=[{"name": "fetch", "image": "\u000bbusybox"}])]),
            (f"{s}-volume-claim-name-pattern", "spec.volumes[0].persistentVolumeClaim.claimName", "should match",
             [base(kind, volumes=[{"name": "v", "mountPath": "/v", "persistentVolumeClaim": {"claimName": "data/1"}}])]),
            # The API server took any string as a quantity before the CRD's pattern; the pod was refused at render.
            (f"{s}-container-resources-quantity-pattern", "spec.container.resources.requests.cpu", "should match",
             [base(kind, container={"image": "img", "resources": {"requests": {"cpu": "2 cores"}}})]),
            (f"{s}-volume-size-limit-negative", "spec.volumes[0].emptyDir.sizeLimit", "should match",
             [base(kind, volumes=[{"name": "v", "mountPath": "/v", "emptyDir": {"sizeLimit": "-1Gi"}}])]),
            # The API server's date-time format takes both; no RFC 3339 parser reads them.
            (f"{s}-schedule-expires-at-fraction-mark", "spec.schedule.expiresAt", "should match",
             [base(kind, schedule={"expiresAt": "2026-12-31T18:00:00x5Z"})]),
            (f"{s}-schedule-expires-at-offset", "spec.schedule.expiresAt", "should match",
             [base(kind, schedule={"expiresAt": "2026-12-31T18:00:00+99:99"})]),
        ]
    cases += [
        ("isvc-gateway-parent-name-pattern", "spec.gateway.parentRef.name", "should match",
         [base("InferenceService", gateway={"hostnames": ["m.localhost"], "parentRef": {"name": "Shared Gateway"}})]),
        ("isvc-gateway-parent-namespace-pattern", "spec.gateway.parentRef.namespace", "should match",
         [base("InferenceService", gateway={"hostnames": ["m.localhost"],
                                            "parentRef": {"name": "shared", "namespace": "gateway.system"}})]),
        ("isvc-gateway-parent-section-name-pattern", "spec.gateway.parentRef.sectionName", "should match",
         [base("InferenceService", gateway={"hostnames": ["m.localhost"],
                                            "parentRef": {"name": "shared", "sectionName": "HTTP"}})]),
        ("isvc-gateway-path-prefix-pattern", "spec.gateway.pathPrefix", "should match",
         [base("InferenceService", gateway={"hostnames": ["m.localhost"], "pathPrefix": "/models/llama 3"})]),
        ("isvc-trigger-authentication-name-pattern", "spec.scaling.triggers[0].authenticationRef.name",
         "should match",
         [base("InferenceService", scaling={"triggers": [{"type": "kafka", "metadata": {"topic": "t"},
                                                          "authenticationRef": {"name": "kafka_creds"}}]})]),
        ("trun-dataset-name-pattern", "spec.datasets[0].name", "should match",
         [base("TrainingRun", datasets=[{"name": "Corpus", "version": "3", "mountPath": "/data"}])]),
        ("trun-dataset-namespace-pattern", "spec.datasets[0].namespace", "should match",
         [base("TrainingRun", datasets=[{"name": "corpus", "version": "3", "mountPath": "/data",
                                         "namespace": "ml.team"}])]),
        ("mfds-allowed-service-account-pattern", "spec.allowedServiceAccounts[0]", "should match",
         [base("Dataset", allowedServiceAccounts=["Trainer Bot"])]),
        ("mfds-pvc-claim-name-pattern", "spec.pvc.claimName", "should match",
         [base("Dataset", pvc={"claimName": "corpus_v3"})]),
    ]
    return cases


def schema_ranges(kind, node, path, out):
    """Collects (path, keyword, value, quantity) for every enum, minimum and maximum under `node`; `quantity` for an
    int-or-string field (a string in the provider's configuration)."""
    if not isinstance(node, dict):
        return
    if "enum" in node:
        out.append((path, "enum", "Bogus", False))
    # A quantity (int-or-string) below its minimum is written as an integer: a float is not int-or-string.
    integer = node.get("type") == "integer" or node.get("x-kubernetes-int-or-string") is True
    if "minimum" in node:
        v = node["minimum"] - 1
        out.append((path, "minimum", int(v) if integer else v, node.get("x-kubernetes-int-or-string") is True))
    if "maximum" in node:
        v = node["maximum"] + 1
        out.append((path, "maximum", int(v) if integer else v, False))
    for k, child in node.get("properties", {}).items():
        schema_ranges(kind, child, f"{path}.{k}", out)
    if isinstance(node.get("items"), dict):
        schema_ranges(kind, node["items"], f"{path}[0]", out)
    if isinstance(node.get("additionalProperties"), dict):
        schema_ranges(kind, node["additionalProperties"], f"{path}.*", out)


def set_path(doc, path, value):
    parts = re.findall(r"[^.\[\]]+|\[\d+\]", path)
    cur = doc
    for i, p in enumerate(parts):
        last = i == len(parts) - 1
        if p.startswith("["):
            idx = int(p[1:-1])
            if last:
                cur[idx] = value
            else:
                cur = cur[idx]
        else:
            if p == "*":
                p = sorted(cur.keys())[0]
            if last:
                cur[p] = value
            else:
                if p not in cur:
                    raise SystemExit(f"FULL manifest lacks {path} (at {p}): extend FULL in generate.py")
                cur = cur[p]
    return doc


def concrete(doc, path):
    """`path` with `*` replaced by the first key present in `doc`."""
    parts = path.split(".")
    cur = doc
    out = []
    for p in parts:
        m = re.match(r"([^\[]+)((\[\d+\])*)$", p)
        name, idx = m.group(1), m.group(2)
        if name == "*":
            name = sorted(cur.keys())[0]
        cur = cur.get(name, {}) if isinstance(cur, dict) else {}
        for i in re.findall(r"\d+", idx):
            cur = cur[int(i)] if isinstance(cur, list) and len(cur) > int(i) else {}
        out.append(name + idx)
    return ".".join(out)


def write(stem, covers, path, fragment, docs, provider_fragment=None):
    header = [f"# covers: {covers}", f"# expect-path: {path}", f"# expect-message: {fragment}"]
    if provider_fragment:
        header.append(f"# expect-message-provider: {provider_fragment}")
    if len(docs) > 1:
        header.append("# update: true (the first document is created, the second is the update that must be refused)")
    body = "---\n".join(yaml.safe_dump(d, sort_keys=False) for d in docs)
    with open(os.path.join(ROOT, stem + ".yaml"), "w") as f:
        f.write("\n".join(header) + "\n" + body)


def main():
    for f in os.listdir(ROOT):
        if f.endswith(".yaml"):
            os.remove(os.path.join(ROOT, f))
    count = 0
    for f in sorted(os.listdir(CRDS)):
        crd = yaml.safe_load(open(os.path.join(CRDS, f)))
        kind = crd["spec"]["names"]["kind"]
        spec_schema = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]
        out = []
        schema_ranges(kind, spec_schema, "spec", out)
        for path, keyword, value, quantity in out:
            doc = set_path(copy.deepcopy(FULL[kind]), path, value)
            cpath = concrete(FULL[kind], path)
            frag = {
                "enum": 'Unsupported value: "Bogus"',
                "minimum": "should be greater than or equal to",
                "maximum": "should be less than or equal to",
            }[keyword]
            stem = f"{SHORT[kind]}-{re.sub(r'[^a-zA-Z0-9]+', '-', cpath[5:]).strip('-').lower()}-{keyword}"
            write(stem, keyword, cpath, frag, [doc], "should match" if quantity else None)
            count += 1
    for stem, path, fragment, docs in cel_cases():
        write(stem, "cel", path, fragment, docs)
        count += 1
    for stem, path, fragment, docs in pattern_cases():
        write(stem, "pattern", path, fragment, docs)
        count += 1
    print(f"wrote {count} invalid manifests", file=sys.stderr)


if __name__ == "__main__":
    main()
