//! Builders for the CEL rules (`x-kubernetes-validations`) shared by the three kinds.
//!
//! Every message names the field and the fix, because the API server shows it verbatim next to
//! the field path (DESIGN.md section 3: "bad input is refused by the API server with the field's
//! path").

use kube::core::{Message, Rule};

/// Rule: exactly one of `fields` (JSON names) is set. `what` names the object in the message,
/// e.g. `volumes[]`.
pub fn exactly_one(fields: &[&str], what: &str) -> Rule {
    let count = count_expr(fields);
    Rule::new(format!("{count} == 1")).message(Message::Message(format!(
        "{what}: set exactly one of {}",
        fields.join(", ")
    )))
}

/// Rule: at most one of `fields` (JSON names) is set.
pub fn at_most_one(fields: &[&str], what: &str) -> Rule {
    let count = count_expr(fields);
    Rule::new(format!("{count} <= 1")).message(Message::Message(format!(
        "{what}: set at most one of {}",
        fields.join(", ")
    )))
}

fn count_expr(fields: &[&str]) -> String {
    fields
        .iter()
        .map(|f| format!("(has(self.{f}) ? 1 : 0)"))
        .collect::<Vec<_>>()
        .join(" + ")
}

/// Transition rule on a spec: `field` may be neither added, removed nor changed after creation.
///
/// A rule on the property itself would only run when both the old and the new object have it, so
/// adding or removing an optional field would slip through (case O-09); this rule sits on the
/// parent (`spec`) and compares presence first. `kind` and `fix` complete the message.
pub fn immutable(field: &str, kind: &str, fix: &str) -> Rule {
    Rule::new(format!(
        "has(self.{field}) == has(oldSelf.{field}) && (!has(self.{field}) || self.{field} == oldSelf.{field})"
    ))
    .message(Message::Message(format!(
        "spec.{field} is immutable in a {kind} (it cannot be added, removed or changed): {fix}"
    )))
    .field_path(format!(".{field}"))
}

/// Rule on a parent: the `key` of every item of its list `field` (JSON names) is unique, as the pod the operator
/// renders needs (Kubernetes refuses two volumes or containers of one name and two mounts at one path; server-side
/// apply refuses two env entries of one name). `what` is the list's path in the message, e.g. `container.env`.
pub fn unique(field: &str, key: &str, what: &str) -> Rule {
    Rule::new(format!(
        "!has(self.{field}) || self.{field}.all(a, self.{field}.exists_one(b, b.{key} == a.{key}))"
    ))
    .message(Message::Message(format!(
        "{what}: two entries have the same {key}, which the pod cannot have: give each a distinct {key} or \
         remove the duplicate"
    )))
    .field_path(format!(".{field}"))
}

/// Kubernetes' `IsQualifiedName` (label keys, resource names) as an RE2 pattern for CEL `matches()`: an optional
/// DNS-subdomain prefix and `/`, then 1-63 characters of `[-A-Za-z0-9_.]`, alphanumeric at both ends. (The
/// prefix's own limit of 253 characters is [`PREFIX_WITHIN_LIMIT`]'s; `[.]` avoids backslashes inside CEL strings.)
pub const QUALIFIED_NAME: &str = "^([a-z0-9]([-a-z0-9]*[a-z0-9])?([.][a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$";

/// CEL on a string `{}` holding a qualified name: its DNS prefix, when it has one, is at most 253 characters
/// (`validation.DNS1123SubdomainMaxLength`, which `IsQualifiedName` applies to the part before `/`); `indexOf` is
/// Kubernetes' CEL strings library.
pub const PREFIX_WITHIN_LIMIT: &str = "{}.indexOf('/') <= 253";

/// Rule on a parent: its optional string `field`, a qualified name the schema's `pattern` checks, has a DNS prefix of
/// at most 253 characters ([`PREFIX_WITHIN_LIMIT`]; a pattern cannot count the prefix alone). `what` is the field's
/// path in the message.
pub fn prefix_within_limit(field: &str, what: &str) -> Rule {
    Rule::new(format!(
        "!has(self.{field}) || {}",
        PREFIX_WITHIN_LIMIT.replace("{}", &format!("self.{field}"))
    ))
    .message(Message::Message(format!(
        "{what}: the DNS prefix before '/' must be at most 253 characters: shorten it"
    )))
    .field_path(format!(".{field}"))
}

/// CEL on a string `{}` naming an extended resource (`example.com/device`): Kubernetes' `IsExtendedResourceName`,
/// which checks `requests.<name>` as a qualified name, so the name does not start `requests.` (a quota's name) and
/// its DNS prefix is at most 244 characters (253 less `requests.`).
pub const EXTENDED_RESOURCE_NAME: &str = "!{}.startsWith('requests.') && {}.indexOf('/') <= 244";

/// Rule on a resource-requirements object: every key of its map `field` without a `/` is a standard container
/// resource (`cpu`, `memory`, `ephemeral-storage`, `hugepages-<size>`: Kubernetes' `IsStandardContainerResourceName`,
/// which `validateContainerResourceName` applies on the pod), and every key with one outside `kubernetes.io/` is an
/// extended resource name ([`EXTENDED_RESOURCE_NAME`]). `what` is the map's path in the message.
pub fn container_resource_names(field: &str, what: &str) -> Rule {
    Rule::new(format!(
        "!has(self.{field}) || self.{field}.all(k, (k.contains('/') && (k.contains('kubernetes.io/') || ({}))) || k \
         in ['cpu', 'memory', 'ephemeral-storage'] || k.startsWith('hugepages-'))",
        EXTENDED_RESOURCE_NAME.replace("{}", "k")
    ))
    .message(Message::Message(format!(
        "{what}: a name without '/' must be cpu, memory, ephemeral-storage or hugepages-<size> (Kubernetes' standard \
         container resources); a device is named with its domain, e.g. example.com/device (GPUs: use gpu), whose \
         DNS prefix is at most 244 characters and which does not start with requests. (a quota's name): fix the name"
    )))
    .field_path(format!(".{field}"))
}

/// CEL on a resource name `k`: an extended resource (Kubernetes' `IsExtendedResourceName`: a `/` outside the
/// `kubernetes.io/` namespace) or huge pages (`hugepages-<size>`), which Kubernetes never overcommits
/// (`IsOvercommitAllowed`).
const NOT_OVERCOMMITTED: &str =
    "((k.contains('/') && !k.contains('kubernetes.io/')) || k.startsWith('hugepages-'))";

/// Rule on a resource-requirements object: every extended resource or huge pages in `requests` has a limit too
/// (`validateResourceRequirements`: "Limit must be set for non overcommitable resources", which Kubernetes checks
/// only on the rendered pod). A key-presence test: the amounts themselves are compared client-side
/// (`crate::validate::resources`), as comparing them here exceeds the API server's CEL cost budget.
pub fn limits_for_requests_not_overcommitted() -> Rule {
    Rule::new(format!(
        "!has(self.requests) || self.requests.all(k, !{NOT_OVERCOMMITTED} || (has(self.limits) && k in self.limits))"
    ))
    .message(Message::Message(
        "resources.limits: an extended resource (example.com/device) or huge pages in resources.requests need a \
         limit of the same amount, as Kubernetes never overcommits them: add the limit (a GPU that gpu places is \
         set by gpu.count, not here)"
            .into(),
    ))
    .field_path(".limits")
}

/// Rule on a resource-requirements object: huge pages come with a `cpu` or `memory` request or limit
/// (`validateResourceRequirements`: "HugePages require cpu or memory", checked only on the rendered pod).
pub fn huge_pages_beside_cpu_or_memory() -> Rule {
    let any = |map: &str, test: &str| format!("(has(self.{map}) && {test})");
    let huge = |map: &str| {
        any(
            map,
            &format!("self.{map}.exists(k, k.startsWith('hugepages-'))"),
        )
    };
    let compute = |map: &str| {
        any(
            map,
            &format!("('cpu' in self.{map} || 'memory' in self.{map})"),
        )
    };
    Rule::new(format!(
        "!({} || {}) || {} || {}",
        huge("requests"),
        huge("limits"),
        compute("requests"),
        compute("limits")
    ))
    .message(Message::Message(
        "resources: huge pages need a cpu or memory request or limit beside them, as Kubernetes \
         requires on the pod: add memory to resources.limits"
            .into(),
    ))
}

/// Rule on a parent: every key of its map `field` is a qualified name ([`QUALIFIED_NAME`], [`PREFIX_WITHIN_LIMIT`]).
/// `what` is the map's path in the message and `example` a valid key.
pub fn qualified_keys(field: &str, what: &str, example: &str) -> Rule {
    Rule::new(format!(
        "!has(self.{field}) || self.{field}.all(k, k.matches('{QUALIFIED_NAME}') && {})",
        PREFIX_WITHIN_LIMIT.replace("{}", "k")
    ))
    .message(Message::Message(format!(
        "{what}: every key must be a qualified name ({example}: an optional DNS prefix of at most 253 characters \
         and '/', then at most 63 letters, digits, '-', '_' or '.', starting and ending with a letter or digit): fix \
         the key"
    )))
    .field_path(format!(".{field}"))
}

/// The CEL condition "the pod has more than one GPU" on a spec (`gpu.count > 1`): the pods the operator gives its own
/// writable shared memory at `/dev/shm` (the `dshm` emptyDir; NCCL needs it).
const MULTI_GPU: &str = "has(self.gpu) && self.gpu.count > 1";

/// The CEL list of the paths the kubelet mounts at `/dev/shm`.
const SHARED_MEMORY_PATHS: &str = "['/dev/shm', '/dev/shm/']";

/// Rule on a spec with `gpu` and `volumes`: in a pod with more than one GPU, a volume at `/dev/shm` is a writable
/// `emptyDir` (it then takes the place of the operator's, to size it), never another source or a read-only one. The
/// operator's render refuses the same (`InvalidSpec`) for an object stored before this rule; here it fails at
/// admission, and at `terraform plan` through the provider's CEL check, before anything is applied.
pub fn shared_memory_volumes() -> Rule {
    Rule::new(format!(
        "!({MULTI_GPU}) || !has(self.volumes) || self.volumes.all(v, !(v.mountPath in {SHARED_MEMORY_PATHS}) || \
         (has(v.emptyDir) && !(has(v.readOnly) && v.readOnly)))"
    ))
    .message(Message::Message(
        "volumes: a pod with more than one GPU (gpu.count > 1) gets writable shared memory at /dev/shm (NCCL needs \
         it): mount the volume at another path, or make the one at /dev/shm a writable emptyDir (medium: Memory) to \
         size it yourself"
            .into(),
    ))
    .field_path(".volumes")
}

/// Rule on a TrainingRun's spec: in a pod with more than one GPU, no Dataset is mounted at `/dev/shm` (see
/// [`shared_memory_volumes`]).
pub fn shared_memory_datasets() -> Rule {
    Rule::new(format!(
        "!({MULTI_GPU}) || !has(self.datasets) || self.datasets.all(d, !(d.mountPath in {SHARED_MEMORY_PATHS}))"
    ))
    .message(Message::Message(
        "datasets: a pod with more than one GPU (gpu.count > 1) gets writable shared memory at /dev/shm (NCCL needs \
         it): mount the dataset at another path"
            .into(),
    ))
    .field_path(".datasets")
}
