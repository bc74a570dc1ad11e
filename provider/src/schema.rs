//! Rust description of Terraform schemas (tfplugin5 `Schema`), the cty type a block implies, and
//! the provider configuration schema (DESIGN.md section 6).

use std::collections::BTreeMap;

use crate::proto::tfplugin5 as pb;
use crate::value::Type;

/// A versioned schema (`Schema.version`, `Schema.block`).
#[derive(Clone, Debug, PartialEq)]
pub struct Schema {
    /// Schema version written to state; bump it and extend UpgradeResourceState together.
    pub version: i64,
    /// The root block.
    pub block: Block,
}

/// A block: attributes plus nested blocks (`Schema.Block`).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Block {
    /// Attributes, in display order.
    pub attributes: Vec<Attribute>,
    /// Nested blocks, in display order.
    pub blocks: Vec<NestedBlock>,
    /// Plain-text description.
    pub description: String,
}

/// An attribute (`Schema.Attribute`). Exactly one of required / optional / computed-only holds;
/// optional and computed together mean "the provider fills it when the configuration leaves it
/// null".
#[derive(Clone, Debug, PartialEq)]
pub struct Attribute {
    /// snake_case name.
    pub name: String,
    /// cty type.
    pub ty: Type,
    /// Plain-text description.
    pub description: String,
    /// Must be set in configuration.
    pub required: bool,
    /// May be set in configuration.
    pub optional: bool,
    /// The provider may set it (plan or apply).
    pub computed: bool,
    /// Hidden in plan output.
    pub sensitive: bool,
}

impl Attribute {
    fn new(name: &str, ty: Type, description: &str) -> Attribute {
        Attribute {
            name: name.to_string(),
            ty,
            description: description.to_string(),
            required: false,
            optional: false,
            computed: false,
            sensitive: false,
        }
    }

    /// A required attribute.
    pub fn required(name: &str, ty: Type, description: &str) -> Attribute {
        Attribute {
            required: true,
            ..Attribute::new(name, ty, description)
        }
    }

    /// An optional attribute (null stays null).
    pub fn optional(name: &str, ty: Type, description: &str) -> Attribute {
        Attribute {
            optional: true,
            ..Attribute::new(name, ty, description)
        }
    }

    /// An optional attribute the provider fills when left null.
    pub fn optional_computed(name: &str, ty: Type, description: &str) -> Attribute {
        Attribute {
            optional: true,
            computed: true,
            ..Attribute::new(name, ty, description)
        }
    }

    /// A read-only attribute set by the provider.
    pub fn computed(name: &str, ty: Type, description: &str) -> Attribute {
        Attribute {
            computed: true,
            ..Attribute::new(name, ty, description)
        }
    }

    /// This attribute, marked sensitive.
    pub fn sensitive(self) -> Attribute {
        Attribute {
            sensitive: true,
            ..self
        }
    }
}

/// How a nested block repeats (`Schema.NestedBlock.NestingMode`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Nesting {
    /// At most one; the value is an object or null.
    Single,
    /// Ordered; the value is a list of objects (empty, never null, when absent).
    List,
    /// Unordered; a set of objects.
    Set,
    /// Labelled (`name "label" { ... }`); a map of objects.
    Map,
}

/// A nested block type (`Schema.NestedBlock`).
#[derive(Clone, Debug, PartialEq)]
pub struct NestedBlock {
    /// snake_case block name.
    pub type_name: String,
    /// The block body.
    pub block: Block,
    /// Repetition.
    pub nesting: Nesting,
    /// Minimum count (1 on a Single block makes it required).
    pub min_items: i64,
    /// Maximum count (0 = unlimited).
    pub max_items: i64,
}

impl NestedBlock {
    /// The cty type of this block's value: its body's object type for a Single block, a list, set or map of it
    /// otherwise.
    pub fn value_type(&self) -> Type {
        let body = self.block.value_type();
        match self.nesting {
            Nesting::Single => body,
            Nesting::List => Type::list(body),
            Nesting::Set => Type::set(body),
            Nesting::Map => Type::map(body),
        }
    }
}

impl Block {
    /// The cty object type of this block's value: attributes by type; Single blocks as objects,
    /// List/Set/Map blocks as list/set/map of objects.
    pub fn value_type(&self) -> Type {
        let mut attrs: BTreeMap<String, Type> = self
            .attributes
            .iter()
            .map(|a| (a.name.clone(), a.ty.clone()))
            .collect();
        for nested in &self.blocks {
            attrs.insert(nested.type_name.clone(), nested.value_type());
        }
        Type::Object(attrs)
    }

    /// Whether an attribute of this block or of a block nested in it is sensitive.
    pub fn contains_sensitive(&self) -> bool {
        self.attributes.iter().any(|a| a.sensitive)
            || self.blocks.iter().any(|b| b.block.contains_sensitive())
    }

    /// The attribute named `name`.
    pub fn attribute(&self, name: &str) -> Option<&Attribute> {
        self.attributes.iter().find(|a| a.name == name)
    }

    /// The nested block named `name`.
    pub fn nested(&self, name: &str) -> Option<&NestedBlock> {
        self.blocks.iter().find(|b| b.type_name == name)
    }

    /// The protobuf form.
    pub fn to_proto(&self, version: i64) -> pb::schema::Block {
        pb::schema::Block {
            version,
            attributes: self
                .attributes
                .iter()
                .map(|a| pb::schema::Attribute {
                    name: a.name.clone(),
                    r#type: a.ty.to_json_bytes(),
                    description: a.description.clone(),
                    required: a.required,
                    optional: a.optional,
                    computed: a.computed,
                    sensitive: a.sensitive,
                    description_kind: pb::StringKind::Plain as i32,
                    deprecated: false,
                    write_only: false,
                })
                .collect(),
            block_types: self
                .blocks
                .iter()
                .map(|b| pb::schema::NestedBlock {
                    type_name: b.type_name.clone(),
                    block: Some(b.block.to_proto(version)),
                    nesting: match b.nesting {
                        Nesting::Single => pb::schema::nested_block::NestingMode::Single,
                        Nesting::List => pb::schema::nested_block::NestingMode::List,
                        Nesting::Set => pb::schema::nested_block::NestingMode::Set,
                        Nesting::Map => pb::schema::nested_block::NestingMode::Map,
                    } as i32,
                    min_items: b.min_items,
                    max_items: b.max_items,
                })
                .collect(),
            description: self.description.clone(),
            description_kind: pb::StringKind::Plain as i32,
            deprecated: false,
        }
    }

    /// Checks the rules Terraform core applies to schemas (`configschema.Block.InternalValidate`):
    /// valid names, unique names, one of required/optional/computed, required not computed.
    /// Returns the problems found (empty = valid); `path` prefixes messages.
    pub fn invariant_violations(&self, path: &str) -> Vec<String> {
        let mut problems = Vec::new();
        let mut seen = std::collections::BTreeSet::new();
        let valid_name = |n: &str| {
            !n.is_empty()
                && n.bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
                && !n.as_bytes()[0].is_ascii_digit()
        };
        for a in &self.attributes {
            let here = format!("{path}{}", a.name);
            if !valid_name(&a.name) {
                problems.push(format!("{here}: name is not snake_case"));
            }
            if !seen.insert(a.name.clone()) {
                problems.push(format!("{here}: duplicate name"));
            }
            if !(a.required || a.optional || a.computed) {
                problems.push(format!("{here}: neither required, optional nor computed"));
            }
            if a.required && (a.optional || a.computed) {
                problems.push(format!("{here}: required cannot be optional or computed"));
            }
        }
        for b in &self.blocks {
            let here = format!("{path}{}", b.type_name);
            if !valid_name(&b.type_name) {
                problems.push(format!("{here}: name is not snake_case"));
            }
            if !seen.insert(b.type_name.clone()) {
                problems.push(format!("{here}: duplicate name"));
            }
            match b.nesting {
                Nesting::Single if !matches!((b.min_items, b.max_items), (0, 0) | (1, 1)) => {
                    problems.push(format!(
                        "{here}: single blocks need min_items == max_items, 0 or 1"
                    ));
                }
                Nesting::Map if (b.min_items, b.max_items) != (0, 0) => {
                    problems.push(format!("{here}: map blocks cannot limit their count"));
                }
                Nesting::List | Nesting::Set
                    if b.min_items < 0 || (b.max_items != 0 && b.min_items > b.max_items) =>
                {
                    problems.push(format!("{here}: min_items > max_items"));
                }
                _ => {}
            }
            problems.extend(b.block.invariant_violations(&format!("{here}.")));
        }
        problems
    }
}

impl Schema {
    /// The protobuf form.
    pub fn to_proto(&self) -> pb::Schema {
        pb::Schema {
            version: self.version,
            block: Some(self.block.to_proto(self.version)),
        }
    }

    /// The cty type of values of this schema.
    pub fn value_type(&self) -> Type {
        self.block.value_type()
    }
}

/// Default `field_manager` (DESIGN.md section 6).
pub const DEFAULT_FIELD_MANAGER: &str = "terraform-modelfleet";

/// The provider configuration schema (DESIGN.md section 6). All optional: with nothing set the
/// provider uses the standard kubeconfig discovery (`KUBECONFIG`, `~/.kube/config`, in-cluster).
pub fn provider_schema() -> Schema {
    let s = Type::String;
    Schema {
        version: 0,
        block: Block {
            description: "Model Fleet: manage InferenceService, TrainingRun and Dataset custom \
                          resources by server-side apply."
                .into(),
            attributes: vec![
                Attribute::optional(
                    "kubeconfig_path",
                    s.clone(),
                    "Path to a kubeconfig file; a leading `~/` is the home directory ($HOME). Defaults \
                     to KUBECONFIG, ~/.kube/config or the in-cluster service account.",
                ),
                Attribute::optional(
                    "kubeconfig_context",
                    s.clone(),
                    "Context in the kubeconfig to use (default: its current-context).",
                ),
                Attribute::optional(
                    "host",
                    s.clone(),
                    "API server URL (https://host:port). Use instead of a kubeconfig.",
                ),
                Attribute::optional("token", s.clone(), "Bearer token for `host`.").sensitive(),
                Attribute::optional(
                    "client_certificate",
                    s.clone(),
                    "PEM client certificate for `host`.",
                ),
                Attribute::optional("client_key", s.clone(), "PEM client key for `host`.")
                    .sensitive(),
                Attribute::optional(
                    "cluster_ca_certificate",
                    s.clone(),
                    "PEM CA certificate of the API server at `host`.",
                ),
                Attribute::optional(
                    "insecure",
                    Type::Bool,
                    "Skip TLS verification of the API server (testing only).",
                ),
                Attribute::optional(
                    "namespace",
                    s.clone(),
                    "Namespace for resources that do not set one (default `default`); changing it replaces them.",
                ),
                Attribute::optional(
                    "field_manager",
                    s,
                    "Server-side apply field manager (default `terraform-modelfleet`). Keep a name starting \
                     `terraform`: the Slack bot tells people to change a field Terraform owns in the configuration \
                     only when its manager's name starts so. After a change, the next write to each object takes \
                     over the fields it changes, as the first write after an import does, and later changes of the \
                     fields it sent unchanged (shared with the old manager) are taken over too.",
                ),
                Attribute::optional(
                    "force_conflicts",
                    Type::Bool,
                    "Take over fields owned by other field managers (default false: a conflict \
                     is an error naming the other manager and the fields). Not needed after an import or a change \
                     of `field_manager`: those writes take over the fields they write. A conflict on a field this \
                     provider's manager shares with another (both applied the same value) is taken over without it.",
                ),
            ],
            blocks: vec![],
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn provider_schema_is_valid_and_marks_secrets_sensitive() {
        let schema = provider_schema();
        assert_eq!(schema.block.invariant_violations(""), Vec::<String>::new());
        for name in ["token", "client_key"] {
            assert!(schema.block.attribute(name).unwrap().sensitive, "{name}");
        }
        for a in &schema.block.attributes {
            assert!(a.optional && !a.required && !a.computed, "{}", a.name);
        }
        let names: Vec<_> = schema
            .block
            .attributes
            .iter()
            .map(|a| a.name.as_str())
            .collect();
        // Every attribute is either a connection setting (which data sources check for unknowns) or one of these.
        let mut expected = crate::config::CONNECTION_ATTRIBUTES.to_vec();
        expected.extend(["namespace", "field_manager", "force_conflicts"]);
        assert_eq!(names, expected);
    }

    #[test]
    fn block_types_follow_nesting() {
        let block = Block {
            attributes: vec![Attribute::required("a", Type::String, "")],
            blocks: vec![
                NestedBlock {
                    type_name: "one".into(),
                    block: Block::default(),
                    nesting: Nesting::Single,
                    min_items: 0,
                    max_items: 0,
                },
                NestedBlock {
                    type_name: "many".into(),
                    block: Block::default(),
                    nesting: Nesting::Map,
                    min_items: 0,
                    max_items: 0,
                },
            ],
            description: String::new(),
        };
        let Type::Object(attrs) = block.value_type() else {
            panic!("object expected")
        };
        assert_eq!(attrs["one"], Type::Object(BTreeMap::new()));
        assert_eq!(attrs["many"], Type::map(Type::Object(BTreeMap::new())));
        let proto = block.to_proto(0);
        assert_eq!(proto.attributes[0].r#type, br#""string""#.to_vec());
        assert_eq!(proto.block_types[1].nesting, 4);
    }

    #[test]
    fn invariants_catch_bad_schemas() {
        let block = Block {
            attributes: vec![
                Attribute::required("Bad", Type::String, ""),
                Attribute {
                    computed: true,
                    ..Attribute::required("x", Type::String, "")
                },
                Attribute::optional("x", Type::String, ""),
            ],
            ..Block::default()
        };
        assert_eq!(block.invariant_violations("").len(), 3);
        // Terraform core rejects single blocks whose min and max differ.
        let block = Block {
            blocks: vec![NestedBlock {
                type_name: "pvc".into(),
                block: Block::default(),
                nesting: Nesting::Single,
                min_items: 0,
                max_items: 1,
            }],
            ..Block::default()
        };
        assert_eq!(block.invariant_violations("").len(), 1);
    }
}
