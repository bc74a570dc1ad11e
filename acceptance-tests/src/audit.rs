//! Counting requests in the control plane's audit log.
//!
//! The API server writes one JSON line per write request (policy in
//! `cluster/manifests/audit-policy.yaml`: verbs create, update, patch, delete, deletecollection at
//! Metadata level, stage ResponseComplete), and one per request of any verb on `secrets` (so a test can prove who
//! read one; Metadata level never records a Secret's data). Tests take a [`AuditMark`] before acting and count
//! what a user wrote (or read of secrets) after it.

use std::io::{Read, Seek, SeekFrom};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::Context;
use serde::Deserialize;

/// An instance's audit log file.
#[derive(Debug, Clone)]
pub struct AuditLog {
    path: PathBuf,
}

/// A position in the audit log: entries after it are the ones a test caused.
///
/// The API server rotates the log at 100 MB (`--audit-log-maxsize` default): it renames `audit.log` to
/// `audit-<time>.log` and starts a new one. The mark remembers the file by inode, so entries after it are found in
/// the renamed file and in every file written since.
#[derive(Debug, Clone)]
pub struct AuditMark {
    path: PathBuf,
    offset: u64,
    inode: u64,
}

/// One audited request (the fields tests look at).
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AuditEvent {
    /// API verb: `create`, `update`, `patch`, `delete`, `deletecollection`.
    pub verb: String,
    /// Request path, e.g. `/api/v1/namespaces/x/configmaps`.
    pub request_u_r_i: String,
    /// Authenticated user.
    pub user: AuditUser,
    /// Impersonated user, when the request impersonated one.
    #[serde(default)]
    pub impersonated_user: Option<AuditUser>,
    /// The object acted on.
    #[serde(default)]
    pub object_ref: Option<serde_json::Value>,
    /// Response status (code), when recorded.
    #[serde(default)]
    pub response_status: Option<serde_json::Value>,
    /// `ResponseComplete`, `Panic`, ...
    pub stage: String,
    /// When the stage was reached (RFC 3339, microseconds).
    #[serde(default)]
    pub stage_timestamp: Option<String>,
}

/// The user of an audited request.
#[derive(Debug, Clone, Deserialize)]
pub struct AuditUser {
    /// User name, e.g. `model-fleet-operator` or `system:serviceaccount:ns:name`.
    #[serde(default)]
    pub username: String,
    /// Extra facts of the token, e.g. `authentication.kubernetes.io/pod-name` for a pod's bound
    /// ServiceAccount token.
    #[serde(default)]
    pub extra: std::collections::BTreeMap<String, Vec<String>>,
}

impl AuditEvent {
    /// The user the request acted as: the impersonated one if any, else the authenticated one.
    pub fn effective_user(&self) -> &str {
        self.impersonated_user
            .as_ref()
            .map_or(self.user.username.as_str(), |u| u.username.as_str())
    }
}

/// The verbs the audit policy records for every resource.
const WRITE_VERBS: [&str; 5] = ["create", "update", "patch", "delete", "deletecollection"];

impl AuditUser {
    /// The pod whose bound ServiceAccount token made the request, if any.
    pub fn pod_name(&self) -> Option<&str> {
        self.extra
            .get("authentication.kubernetes.io/pod-name")
            .and_then(|v| v.first())
            .map(String::as_str)
    }
}

impl AuditLog {
    pub(crate) fn new(path: PathBuf) -> Self {
        Self { path }
    }

    /// Marks the current end of the log.
    pub fn mark(&self) -> anyhow::Result<AuditMark> {
        settle(&self.path)?;
        let metadata = std::fs::metadata(&self.path)
            .with_context(|| format!("reading {}", self.path.display()))?;
        Ok(AuditMark {
            path: self.path.clone(),
            offset: metadata.len(),
            inode: metadata.ino(),
        })
    }
}

impl AuditMark {
    /// Write requests made by `user` (the effective user: the impersonated one if any) since the
    /// mark. Waits until the log stops growing first, because the API server may append an entry
    /// just after it answered the request.
    pub fn writes_by(&self, user: &str) -> anyhow::Result<Vec<AuditEvent>> {
        Ok(self
            .writes()?
            .into_iter()
            .filter(|event| event.effective_user() == user)
            .collect())
    }

    /// Every completed write request since the mark, by any user (settled as [`AuditMark::writes_by`]).
    pub fn writes(&self) -> anyhow::Result<Vec<AuditEvent>> {
        Ok(self
            .completed()?
            .into_iter()
            .filter(|event| WRITE_VERBS.contains(&event.verb.as_str()))
            .collect())
    }

    /// Every completed request of any verb on `resource` (e.g. `secrets`) since the mark, by any user. Reads are
    /// recorded for `secrets` only (and for the benchmarks' users): for other resources this returns the writes.
    pub fn requests_on(&self, resource: &str) -> anyhow::Result<Vec<AuditEvent>> {
        Ok(self
            .completed()?
            .into_iter()
            .filter(|event| {
                event
                    .object_ref
                    .as_ref()
                    .is_some_and(|o| o["resource"] == resource)
            })
            .collect())
    }

    /// Every completed request since the mark (settled as [`AuditMark::writes_by`]).
    fn completed(&self) -> anyhow::Result<Vec<AuditEvent>> {
        settle(&self.path)?;
        let text = self.text_since()?;
        let mut events = Vec::new();
        for line in text.lines().filter(|l| !l.trim().is_empty()) {
            let event: AuditEvent =
                serde_json::from_str(line).with_context(|| format!("parsing audit line {line}"))?;
            if event.stage == "ResponseComplete" {
                events.push(event);
            }
        }
        Ok(events)
    }
}

impl AuditMark {
    /// The log's text after the mark: the rest of the marked file, then every file the API server started after it
    /// (rotated files sort by the time in their name; `audit.log` is the newest).
    fn text_since(&self) -> anyhow::Result<String> {
        let files = log_files(&self.path)?;
        let start = files
            .iter()
            .position(|file| std::fs::metadata(file).is_ok_and(|m| m.ino() == self.inode))
            .with_context(|| {
                format!(
                    "the audit log marked in {} was rotated away (deleted)",
                    self.path.display()
                )
            })?;
        let mut text = String::new();
        for (k, path) in files[start..].iter().enumerate() {
            let mut file = std::fs::File::open(path)?;
            if k == 0 {
                file.seek(SeekFrom::Start(self.offset))?;
            }
            file.read_to_string(&mut text)?;
        }
        Ok(text)
    }
}

/// `<dir>/audit-*.log` (rotated, oldest first) then `path` itself.
fn log_files(path: &Path) -> anyhow::Result<Vec<PathBuf>> {
    let dir = path.parent().context("audit log path without a folder")?;
    let stem = path.file_stem().and_then(|s| s.to_str()).unwrap_or("audit");
    let mut rotated: Vec<PathBuf> = std::fs::read_dir(dir)?
        .filter_map(Result::ok)
        .map(|entry| entry.path())
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with(&format!("{stem}-")) && n.ends_with(".log"))
        })
        .collect();
    rotated.sort();
    rotated.push(path.to_path_buf());
    Ok(rotated)
}

/// Waits (at most 5 s) until the file's size has not changed for 500 ms.
fn settle(path: &PathBuf) -> anyhow::Result<()> {
    let deadline = Instant::now() + Duration::from_secs(5);
    let mut size = std::fs::metadata(path)?.len();
    let mut stable_since = Instant::now();
    while Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(100));
        let now = std::fs::metadata(path)?.len();
        if now != size {
            size = now;
            stable_since = Instant::now();
        } else if stable_since.elapsed() >= Duration::from_millis(500) {
            break;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(user: &str) -> String {
        format!(
            "{{\"verb\":\"create\",\"requestURI\":\"/x\",\"user\":{{\"username\":\"{user}\"}},\"stage\":\"ResponseComplete\"}}\n"
        )
    }

    #[test]
    fn a_mark_follows_the_log_across_a_rotation() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("audit.log");
        std::fs::write(&path, entry("before")).unwrap();
        let mark = AuditLog::new(path.clone()).mark().unwrap();
        std::fs::write(&path, entry("before") + &entry("after-1")).unwrap();
        // What the API server does at --audit-log-maxsize: rename, then start a new file.
        std::fs::rename(&path, dir.path().join("audit-2026-12-03T08-49-06.873.log")).unwrap();
        std::fs::write(&path, entry("after-2")).unwrap();
        let users: Vec<String> = mark
            .writes()
            .unwrap()
            .into_iter()
            .map(|e| e.user.username)
            .collect();
        assert_eq!(users, ["after-1", "after-2"]);
    }
}
