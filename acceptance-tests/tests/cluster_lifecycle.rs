//! `cluster.sh` lifecycle (issue 2): instances run side by side on free ports, `down` stops exactly
//! what its instance started, and the errors a newcomer meets say what to do.

use std::net::TcpListener;
use std::path::Path;
use std::process::{Command, Output};

use acceptance_tests::Cluster;
use acceptance_tests::cluster::repo_root;

fn cluster_sh(args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut cmd = Command::new("bash");
    cmd.arg(repo_root().join("acceptance-tests/cluster/scripts/cluster.sh"))
        .args(args);
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.output().expect("running cluster.sh")
}

fn pids(dir: &Path) -> Vec<u32> {
    std::fs::read_dir(dir.join("pids"))
        .expect("pids folder")
        .map(|e| {
            std::fs::read_to_string(e.unwrap().path())
                .unwrap()
                .trim()
                .parse()
                .unwrap()
        })
        .collect()
}

/// Whether `pid` is a live process (a zombie waiting to be reaped by its parent does not count).
fn running(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|stat| {
            stat.rsplit_once(") ")
                .map(|(_, rest)| !rest.starts_with('Z'))
        })
        .unwrap_or(false)
}

fn port_of(dir: &Path) -> String {
    let env = std::fs::read_to_string(dir.join("ports.env")).expect("ports.env");
    env.lines()
        .find_map(|l| l.strip_prefix("APISERVER_PORT="))
        .unwrap()
        .to_owned()
}

#[test]
fn a_second_instance_runs_beside_the_first_and_down_stops_only_it() {
    let main = Cluster::connect().expect("main test instance");
    let side = "lifecycle-side";
    let up = cluster_sh(&["up", side], &[]);
    assert!(
        up.status.success(),
        "{}",
        String::from_utf8_lossy(&up.stderr)
    );
    let side_dir = repo_root().join(".local").join(side);
    assert_ne!(port_of(&side_dir), port_of(&main.dir));
    let side_pids = pids(&side_dir);
    let main_pids = pids(&main.dir);
    assert_eq!(
        side_pids.len(),
        5,
        "etcd, apiserver, controller-manager, scheduler, kwok"
    );

    let status = cluster_sh(&["status", side], &[]);
    assert!(status.status.success());
    assert!(String::from_utf8_lossy(&status.stdout).contains("readyz: ok"));

    let down = cluster_sh(&["down", side], &[]);
    assert!(
        down.status.success(),
        "{}",
        String::from_utf8_lossy(&down.stderr)
    );
    assert!(!side_dir.exists(), "down removes the instance's data");
    for pid in side_pids {
        assert!(!running(pid), "pid {pid} of {side} still runs");
    }
    for pid in main_pids {
        assert!(running(pid), "main instance pid {pid} was stopped");
    }
    let main_status = cluster_sh(&["status", &main.instance], &[]);
    assert!(String::from_utf8_lossy(&main_status.stdout).contains("readyz: ok"));
}

#[test]
fn a_taken_port_is_a_clear_error() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port().to_string();
    let name = "lifecycle-port";
    let out = cluster_sh(&["up", name], &[("MODEL_FLEET_APISERVER_PORT", &port)]);
    let left_data = repo_root().join(".local").join(name).exists();
    let _ = cluster_sh(&["down", name], &[]);
    assert!(!out.status.success());
    assert!(!left_data, "a refused start left .local/{name}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(&format!("port {port}")) && stderr.contains("in use"),
        "{stderr}"
    );
}

#[test]
fn missing_go_is_a_clear_error() {
    // Keep the basic tools, drop Go's folders.
    let path = std::env::var("PATH").unwrap();
    let without_go: Vec<&str> = path
        .split(':')
        .filter(|dir| !Path::new(dir).join("go").exists())
        .collect();
    let out = cluster_sh(
        &["up", "lifecycle-nogo"],
        &[("PATH", &without_go.join(":"))],
    );
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("Go is not installed"), "{stderr}");
    assert!(!repo_root().join(".local/lifecycle-nogo").exists());
}

/// The CRDs installed from the Go module zips are byte-identical to the reference copies in
/// `../shared/fixtures/crds` (present beside the clone in CI and in the team's checkouts).
#[test]
fn upstream_crds_match_the_reference_copies() {
    let fixtures = repo_root().join("../shared/fixtures/crds");
    if !fixtures.exists() {
        eprintln!("skipped: no reference copies at {}", fixtures.display());
        return;
    }
    let out = Command::new("bash")
        .arg(repo_root().join("acceptance-tests/cluster/scripts/upstream-crds.sh"))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let cache = std::path::PathBuf::from(String::from_utf8(out.stdout).unwrap().trim());
    let env =
        std::fs::read_to_string(repo_root().join("acceptance-tests/cluster/versions.env")).unwrap();
    let version = |key: &str| {
        env.lines()
            .find_map(|l| l.strip_prefix(&format!("{key}=")))
            .unwrap()
            .to_owned()
    };
    let mut compared = 0;
    for (name, key) in [
        ("gateway-api", "GATEWAY_API_VERSION"),
        ("keda", "KEDA_VERSION"),
    ] {
        let reference = fixtures.join(format!("{name}-{}", version(key)));
        for entry in std::fs::read_dir(&reference).unwrap() {
            let path = entry.unwrap().path();
            let file = path.file_name().unwrap();
            let ours = std::fs::read(cache.join(name).join(file)).unwrap_or_default();
            assert!(
                ours == std::fs::read(&path).unwrap(),
                "{name}/{file:?} differs from the reference"
            );
            compared += 1;
        }
    }
    assert!(compared >= 10, "compared only {compared} files");
}

/// With no `terraform` on PATH, no `TF_BIN` and no OpenTofu built, the scripts say how to get one.
#[test]
fn missing_terraform_is_a_clear_error() {
    let path = std::env::var("PATH").unwrap();
    let without_terraform: Vec<&str> = path
        .split(':')
        .filter(|dir| !Path::new(dir).join("terraform").exists())
        .collect();
    let empty_cache = tempfile::tempdir().unwrap();
    let out = Command::new("bash")
        .arg(repo_root().join("acceptance-tests/cluster/scripts/tf-bin.sh"))
        .env("PATH", without_terraform.join(":"))
        .env("MODEL_FLEET_CACHE", empty_cache.path())
        .env_remove("TF_BIN")
        .env_remove("MODEL_FLEET_TF_CLI")
        .output()
        .unwrap();
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("no Terraform CLI")
            && stderr.contains("install terraform")
            && stderr.contains("make bootstrap"),
        "{stderr}"
    );
}
