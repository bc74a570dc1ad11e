//! What else runs on the machine while the benchmark measures: other control plane instances of this repository
//! (left from tests) compete for the same cores and skew every figure (docs/PERFORMANCE.md: two N=1000 runs of one
//! commit differed by 1.5x that way). The benchmark does not stop them (they may be someone's work): it names them
//! in its report.

use std::path::Path;

/// The instances under `local` (`.local/` of the repository) other than `own` whose kube-apiserver process is alive
/// (its recorded pid, `pids/kube-apiserver.pid`, exists in `/proc`), sorted by name.
pub fn competing_instances(local: &Path, own: &str) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir(local) else {
        return Vec::new();
    };
    let mut found: Vec<String> = entries
        .filter_map(Result::ok)
        .filter_map(|entry| {
            let name = entry.file_name().to_string_lossy().into_owned();
            let pid = std::fs::read_to_string(entry.path().join("pids/kube-apiserver.pid")).ok()?;
            let pid: u32 = pid.trim().parse().ok()?;
            (name != own && Path::new(&format!("/proc/{pid}")).exists()).then_some(name)
        })
        .collect();
    found.sort();
    found
}

/// The report's warning about `competing` instances (empty when there are none).
pub fn warning(competing: &[String]) -> String {
    if competing.is_empty() {
        return String::new();
    }
    format!(
        "WARNING: other control plane instances were running during the benchmark ({}): they compete for the \
         same cores, so these figures are not comparable with a quiet run. Stop them with \
         `acceptance-tests/cluster/scripts/cluster.sh down INSTANCE`.\n\n",
        competing.join(", ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn instance(local: &Path, name: &str, pid: &str) {
        let pids = local.join(name).join("pids");
        std::fs::create_dir_all(&pids).unwrap();
        std::fs::write(pids.join("kube-apiserver.pid"), pid).unwrap();
    }

    #[test]
    fn names_other_instances_whose_api_server_runs() {
        let local = tempfile::tempdir().unwrap();
        let alive = std::process::id().to_string();
        instance(local.path(), "bench", &alive);
        instance(local.path(), "test", &alive);
        instance(local.path(), "mine", &format!("{alive}\n"));
        instance(local.path(), "stopped", "4194304999");
        std::fs::create_dir_all(local.path().join("never-started")).unwrap();
        let found = competing_instances(local.path(), "bench");
        assert_eq!(found, ["mine", "test"]);
        assert!(warning(&found).contains("(mine, test)"));
        assert_eq!(warning(&[]), "");
        assert!(competing_instances(&local.path().join("absent"), "bench").is_empty());
    }
}
