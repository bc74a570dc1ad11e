//! schemars transforms for the Kubernetes quantities of the API (`resources`, `emptyDir.sizeLimit`): the CRD states
//! what Kubernetes requires of each amount, as far as an OpenAPI schema can.

/// schemars transform for a quantity field (`emptyDir.sizeLimit`): the API server takes any string or integer for an
/// int-or-string, so this adds what Kubernetes requires of the amount on the pod, at the earliest point
/// ([`quantity_rules`]).
pub(crate) fn quantity(schema: &mut schemars::Schema) {
    if let Some(field) = schema.as_object_mut() {
        quantity_rules(field);
    }
}

/// schemars transform for maps of quantities (`resources.requests`, `.limits`): [`quantity_rules`] on each value,
/// whose description (k8s-openapi's whole `Quantity` essay, 3 KB for each map in the CRD) becomes one line.
pub(crate) fn quantity_values(schema: &mut schemars::Schema) {
    if let Some(values) = schema
        .get_mut("additionalProperties")
        .and_then(|v| v.as_object_mut())
    {
        quantity_rules(values);
        values.insert(
            "description".into(),
            "A Kubernetes quantity, not negative, e.g. `500m`, `2`, `16Gi`.".into(),
        );
    }
}

/// A string matches [`crate::names::QUANTITY_PATTERN`] (a quantity, not negative) and an integer is at least 0. The
/// schema walk of `render -f` and the provider checks the full grammar ([`crate::quantity::check`]) with better words.
fn quantity_rules(field: &mut serde_json::Map<String, serde_json::Value>) {
    field.insert("pattern".into(), crate::names::QUANTITY_PATTERN.into());
    field.insert("minimum".into(), 0.into());
}
