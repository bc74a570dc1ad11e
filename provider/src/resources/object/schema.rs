//! The Terraform schema of a [`CustomResource`]: meta attributes, the spec derived from the CRD, the kind's
//! computed attributes, `wait_for` and `timeouts`; and which attributes require replacement.

use super::super::attributes::{ID, NAME, NAMESPACE, WAIT_FOR};
use super::super::fields::{self, Field};
use super::super::kind::{Kind, Mutable};
use super::super::timeouts;
use super::DefinitionError;
use crate::schema::{Attribute, Block};
use crate::value::Type;

/// The Terraform schema of kind `K`: meta attributes, the spec, the computed attributes, `wait_for`, `timeouts`.
pub(super) fn block<K: Kind>(fields: &[Field]) -> Block {
    let mut block = Block {
        description: K::DESCRIPTION.to_string(),
        attributes: vec![
            Attribute::computed(ID, Type::String, "`namespace/name` of the object."),
            Attribute::required(
                NAME,
                Type::String,
                "Object name (metadata.name). Changing it replaces the object.",
            ),
            Attribute::optional_computed(
                NAMESPACE,
                Type::String,
                "Namespace (default: the provider's `namespace`). Changing it replaces the object.",
            ),
        ],
        blocks: vec![],
    };
    fields::add_to_block(&mut block, fields);
    for computed in K::COMPUTED {
        block.attributes.push(Attribute::computed(
            computed.name,
            computed.ty.clone(),
            computed.description,
        ));
    }
    if !K::WAIT_VALUES.is_empty() {
        let values: Vec<String> = K::WAIT_VALUES.iter().map(|v| format!("`{v}`")).collect();
        block.attributes.push(Attribute::optional(
            WAIT_FOR,
            Type::String,
            &format!(
                "What apply waits for after writing the object: {} (default `{}`). Bounded by timeouts.create / \
                 timeouts.update (default 20m). A wait ends at once in an error when the operator refuses the spec \
                 (`Ready=False` with `FitTooLarge`, `FitUnsplittable`, `InvalidSpec` or `WritableDatasetMount`). \
                 Reads that fail because the API server is unreachable or overloaded (429, 5xx) are retried for up \
                 to 30s.",
                values.join(", "),
                K::WAIT_VALUES[0]
            ),
        ));
    }
    block.blocks.push(timeouts::block());
    block
}

pub(super) fn replacing_attributes(
    fields: &[Field],
    mutable: Mutable,
) -> Result<Vec<String>, DefinitionError> {
    let mut names = vec![NAME.to_string(), NAMESPACE.to_string()];
    let Mutable::Only(json_names) = mutable else {
        return Ok(names);
    };
    if let Some(unknown) = json_names
        .iter()
        .find(|j| !fields.iter().any(|f| &f.json_name == *j))
    {
        return Err(DefinitionError::UnknownMutable((*unknown).to_string()));
    }
    names.extend(
        fields
            .iter()
            .filter(|f| !json_names.contains(&f.json_name.as_str()))
            .map(|f| f.tf_name.clone()),
    );
    Ok(names)
}
