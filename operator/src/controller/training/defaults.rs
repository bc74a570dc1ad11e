//! Operator-wide built-in defaults added to a run's Job at creation time, outside [`crate::render`].
//!
//! Today the only one is a test hook: [`DEFAULT_ENV_VAR`] names extra environment variables injected into every
//! container of newly created Jobs. It exists so the acceptance tests can restart the operator with a *changed
//! built-in default* (case O-05(b)) and prove that existing Jobs are never touched while new runs get the new value.
//! Pure: the caller reads the environment.

use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::EnvVar;

/// Environment variable of the operator process: `NAME=VALUE` pairs separated by `,`, injected into every container
/// of Jobs created from now on (names a container already sets are left alone). Unset in production.
pub const DEFAULT_ENV_VAR: &str = "MODEL_FLEET_TRAINING_DEFAULT_ENV";

/// Parses [`DEFAULT_ENV_VAR`]'s value into `(name, value)` pairs; entries without `=` or with an empty name are
/// ignored.
pub fn parse_default_env(text: &str) -> Vec<(String, String)> {
    text.split(',')
        .filter_map(|entry| entry.split_once('='))
        .filter(|(name, _)| !name.trim().is_empty())
        .map(|(name, value)| (name.trim().to_owned(), value.to_owned()))
        .collect()
}

/// Adds `env` to every container and init container of `job`'s pod template, unless the container already sets a
/// variable of that name.
pub fn inject_default_env(job: &mut Job, env: &[(String, String)]) {
    if env.is_empty() {
        return;
    }
    let Some(pod) = job.spec.as_mut().and_then(|s| s.template.spec.as_mut()) else {
        return;
    };
    let init = pod.init_containers.iter_mut().flatten();
    for container in pod.containers.iter_mut().chain(init) {
        let vars = container.env.get_or_insert_with(Vec::new);
        for (name, value) in env {
            if !vars.iter().any(|v| &v.name == name) {
                vars.push(EnvVar {
                    name: name.clone(),
                    value: Some(value.clone()),
                    value_from: None,
                });
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::batch::v1::JobSpec;
    use k8s_openapi::api::core::v1::{Container, PodSpec, PodTemplateSpec};

    #[test]
    fn parses_pairs_and_skips_garbage() {
        assert_eq!(
            parse_default_env("A=1,B=x=y,,=z,noequals"),
            vec![("A".into(), "1".into()), ("B".into(), "x=y".into())]
        );
        assert!(parse_default_env("").is_empty());
    }

    #[test]
    fn injects_into_every_container_without_overriding() {
        let container = |name: &str, env: Option<Vec<EnvVar>>| Container {
            name: name.into(),
            env,
            ..Default::default()
        };
        let mut job = Job {
            spec: Some(JobSpec {
                template: PodTemplateSpec {
                    metadata: None,
                    spec: Some(PodSpec {
                        containers: vec![container(
                            "main",
                            Some(vec![EnvVar {
                                name: "A".into(),
                                value: Some("mine".into()),
                                value_from: None,
                            }]),
                        )],
                        init_containers: Some(vec![container("fetch", None)]),
                        ..Default::default()
                    }),
                },
                ..Default::default()
            }),
            ..Default::default()
        };
        inject_default_env(&mut job, &parse_default_env("A=1,B=2"));
        let pod = job.spec.unwrap().template.spec.unwrap();
        let env = |c: &Container| {
            c.env
                .iter()
                .flatten()
                .map(|v| format!("{}={}", v.name, v.value.clone().unwrap_or_default()))
                .collect::<Vec<_>>()
        };
        assert_eq!(env(&pod.containers[0]), vec!["A=mine", "B=2"]);
        assert_eq!(env(&pod.init_containers.unwrap()[0]), vec!["A=1", "B=2"]);
    }
}
