//! Kubernetes field paths (as the API server names them in a 422's causes) to Terraform attribute paths.

use super::{Field, FieldKind};
use crate::diag::AttrPath;

/// Maps a Kubernetes field path under the object (`spec.source.uri`, `spec.splits[train].uri`, or with a map key
/// as a plain segment: `spec.container.resources.requests.cpu`) to the Terraform attribute path, when `fields`
/// (rooted at `spec`) know it.
pub fn attr_path_for(fields: &[Field], k8s_path: &str) -> Option<AttrPath> {
    let rest = k8s_path.strip_prefix("spec.")?;
    let mut path = AttrPath::root();
    let mut current = fields;
    let mut map_key_next = false;
    for segment in rest.split('.') {
        if map_key_next {
            // The segment after a map is its key (the schema walk writes `requests.cpu`).
            path = path.key(segment);
            map_key_next = false;
            continue;
        }
        let (name, key) = match segment.split_once('[') {
            Some((n, k)) => (n, Some(k.trim_end_matches(']'))),
            None => (segment, None),
        };
        let field = current.iter().find(|f| f.json_name == name)?;
        path = path.attr(&field.tf_name);
        if let Some(key) = key {
            path = match key.parse::<usize>() {
                Ok(i) if matches!(field.kind, FieldKind::List(_) | FieldKind::ScalarList(_)) => {
                    path.index(i)
                }
                _ => path.key(key.trim_matches('"')),
            };
        }
        map_key_next =
            key.is_none() && matches!(field.kind, FieldKind::ScalarMap(_) | FieldKind::Map(_));
        current = match &field.kind {
            FieldKind::Single(c) | FieldKind::List(c) | FieldKind::Map(c) => c,
            _ => &[],
        };
    }
    Some(path)
}
