//! The instance's real node `real-1`: kubelet, containerd, runc, the CNI bridge and kube-proxy in a
//! network namespace of its own (`cluster/scripts/node.sh`), where pods run real containers from
//! our images (`images/`, e.g. [`ECHO_IMAGE`]).
//!
//! Reach it the way the network rule allows: HTTP to its pods and Service addresses from inside its
//! namespace ([`RealNode::http_get`], `nsenter --net`), or `kubectl exec` / `logs` through the API
//! server.

use std::path::PathBuf;
use std::process::Command;

use anyhow::{Context, bail};
use serde_json::{Value, json};

use crate::Cluster;
use crate::cluster::repo_root;

/// Name of the real node.
pub const NODE_NAME: &str = "real-1";
/// Label (value `"true"`) and `NoSchedule` taint key of the real node: a pod lands there only when
/// it selects the label and tolerates the taint ([`RealNode::gpu_placement`]).
pub const NODE_LABEL: &str = "modelfleet.io/real-node";
/// Our HTTP echo image (`images/echo`): serves HTTP (`-listen`, `-text`), or runs one of its
/// subcommands (`env`, `cat FILE`, `write FILE TEXT`, `exit CODE`, `sleep SECONDS`).
pub const ECHO_IMAGE: &str = "modelfleet.local/echo:0.1";

/// A running real node of the test instance.
#[derive(Debug, Clone)]
pub struct RealNode {
    /// The instance it belongs to.
    pub instance: String,
    /// Its network namespace (under `/run/netns/`).
    pub netns: String,
    /// Its InternalIP (the node end of its veth pair).
    pub ip: String,
    /// Pod addresses, e.g. `10.240.1.0/24`.
    pub pod_cidr: String,
    /// `.local/<instance>/node/`: configuration, logs and pid files.
    pub dir: PathBuf,
}

impl Cluster {
    /// The instance's real node once it is Ready.
    ///
    /// `Ok(None)` only when `cluster.sh up` found that this machine cannot run a real node (the
    /// reason, recorded in `node/unavailable`, is printed), or `MODEL_FLEET_REAL_NODE=0` was set.
    ///
    /// Errors, loudly: the machine can run one but there is none, or it is not Ready (its state is
    /// in the message).
    pub fn real_node(&self) -> anyhow::Result<Option<RealNode>> {
        let dir = self.dir.join("node");
        if let Ok(reason) = std::fs::read_to_string(dir.join("unavailable")) {
            eprintln!(
                "no real node in instance {}: {} (the real-node checks are not run)",
                self.instance,
                reason.trim()
            );
            return Ok(None);
        }
        let env = std::fs::read_to_string(dir.join("node.env")).with_context(|| {
            format!(
                "instance {} should have a real node (cluster.sh up records its addresses in {} or \
                 why there is none in node/unavailable) but has neither: restart the instance",
                self.instance,
                dir.join("node.env").display()
            )
        })?;
        let var = |key: &str| -> anyhow::Result<String> {
            env.lines()
                .find_map(|l| l.strip_prefix(&format!("{key}=")))
                .map(str::to_owned)
                .with_context(|| format!("{key} missing in node.env"))
        };
        let node = RealNode {
            instance: self.instance.clone(),
            netns: var("NODE_NETNS")?,
            ip: var("NODE_IP")?,
            pod_cidr: var("NODE_POD_CIDR")?,
            dir,
        };
        let ready = self.kubectl_ok(&[
            "get",
            "node",
            NODE_NAME,
            "-o",
            "jsonpath={.status.conditions[?(@.type==\"Ready\")].status}",
        ])?;
        if ready != "True" {
            let status = Command::new("bash")
                .arg(repo_root().join("acceptance-tests/cluster/scripts/node.sh"))
                .args(["status", &self.instance])
                .output()?;
            bail!(
                "real node {NODE_NAME} of instance {} is not Ready (Ready={ready:?}):\n{}",
                self.instance,
                String::from_utf8_lossy(&status.stdout)
            );
        }
        Ok(Some(node))
    }
}

impl RealNode {
    /// The `gpu` block of an InferenceService or TrainingRun that places its pods on the real node:
    /// no GPU (`count: 0`), the node's label as `nodeSelector` and a toleration of its taint. The
    /// API has no CPU-side placement fields; `gpu.nodeSelector` / `gpu.tolerations` are passed
    /// through to the pod unchanged when `count` is 0.
    pub fn gpu_placement() -> Value {
        json!({
            "count": 0,
            "nodeSelector": {NODE_LABEL: "true"},
            "tolerations": [{"key": NODE_LABEL, "operator": "Exists", "effect": "NoSchedule"}],
        })
    }

    /// `GET url` from inside the node's network namespace (where pod and Service addresses exist):
    /// the status code and body. Code 0 means no HTTP answer (connection refused or timed out after
    /// 5 s).
    ///
    /// Errors: `nsenter` or `curl` could not run.
    pub fn http_get(&self, url: &str) -> anyhow::Result<(u16, String)> {
        let out = Command::new("nsenter")
            .arg(format!("--net=/run/netns/{}", self.netns))
            .args([
                "curl",
                "-s",
                "-o",
                "-",
                "-w",
                "\n%{http_code}",
                "--max-time",
                "5",
            ])
            .arg(url)
            .output()
            .context("running nsenter curl")?;
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        let (body, code) = text.rsplit_once('\n').unwrap_or(("", "0"));
        Ok((code.trim().parse().unwrap_or(0), body.to_owned()))
    }

    /// Pid of the node's kubelet, when it runs.
    pub fn kubelet_pid(&self) -> Option<u32> {
        let pid: u32 = std::fs::read_to_string(self.dir.join("pids/kubelet.pid"))
            .ok()?
            .trim()
            .parse()
            .ok()?;
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
        let cmdline = std::fs::read_to_string(format!("/proc/{pid}/cmdline")).ok()?;
        let zombie = stat
            .rsplit_once(") ")
            .is_some_and(|(_, s)| s.starts_with('Z'));
        (!zombie && cmdline.contains("kubelet")).then_some(pid)
    }

    /// Kills the kubelet with SIGKILL (a crash: its containers keep running under containerd) and
    /// waits until it is gone. The returned guard starts it again ([`KubeletDown::restart`]), or on drop when the
    /// test fails first, so one failed test does not leave the node NotReady for the tests after it.
    ///
    /// Errors: no kubelet runs, or it is still there after 10 s.
    pub fn kill_kubelet(&self) -> anyhow::Result<KubeletDown<'_>> {
        let pid = self
            .kubelet_pid()
            .context("no kubelet runs on the real node")?;
        Command::new("kill")
            .args(["-KILL", &pid.to_string()])
            .status()?;
        let down = KubeletDown {
            node: Some(self),
            pid,
        };
        for _ in 0..100 {
            if self.kubelet_pid().is_none() {
                return Ok(down);
            }
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
        bail!("kubelet pid {pid} still runs 10 s after SIGKILL")
    }

    /// Starts the kubelet again (`node.sh kubelet`), which returns once it answers its health check
    /// and the node is Ready.
    ///
    /// Errors: the script's output.
    pub fn start_kubelet(&self) -> anyhow::Result<()> {
        let out = Command::new("bash")
            .arg(repo_root().join("acceptance-tests/cluster/scripts/node.sh"))
            .args(["kubelet", &self.instance])
            .output()?;
        if !out.status.success() {
            bail!(
                "node.sh kubelet failed: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        Ok(())
    }

    /// Creates a PersistentVolume on a host folder of the node (`node/volumes/<ns>-<claim>/`,
    /// removed with the instance) holding `files` (relative path, content), pre-bound to the claim
    /// `ns/claim`, and the claim itself, both `ReadOnlyMany`: a dataset the node really mounts.
    ///
    /// Errors: the folder could not be written, or kubectl's message.
    pub fn host_path_claim(
        &self,
        cluster: &Cluster,
        ns: &str,
        claim: &str,
        files: &[(&str, &str)],
    ) -> anyhow::Result<PathBuf> {
        let pv = format!("{ns}-{claim}");
        let folder = self.dir.join("volumes").join(&pv);
        for (path, content) in files {
            let file = folder.join(path);
            std::fs::create_dir_all(file.parent().context("file without parent")?)?;
            std::fs::write(&file, content)?;
        }
        std::fs::create_dir_all(&folder)?;
        let docs = json!({"apiVersion": "v1", "kind": "List", "items": [
            {"apiVersion": "v1", "kind": "PersistentVolume",
             "metadata": {"name": pv, "labels": {"modelfleet.io/test": "true"}},
             "spec": {"capacity": {"storage": "1Gi"}, "accessModes": ["ReadOnlyMany"],
                      "persistentVolumeReclaimPolicy": "Retain", "storageClassName": "",
                      "hostPath": {"path": folder.to_str().context("non UTF-8 path")?, "type": "Directory"},
                      "claimRef": {"namespace": ns, "name": claim}}},
            {"apiVersion": "v1", "kind": "PersistentVolumeClaim",
             "metadata": {"name": claim, "namespace": ns},
             "spec": {"accessModes": ["ReadOnlyMany"], "storageClassName": "", "volumeName": pv,
                      "resources": {"requests": {"storage": "1Gi"}}}}
        ]});
        cluster.kubectl_apply(&docs, &[])?;
        Ok(folder)
    }
}

/// A kubelet killed by [`RealNode::kill_kubelet`]: started again by [`KubeletDown::restart`], or when dropped.
#[derive(Debug)]
pub struct KubeletDown<'a> {
    node: Option<&'a RealNode>,
    /// The killed kubelet's pid.
    pub pid: u32,
}

impl KubeletDown<'_> {
    /// Starts the kubelet again ([`RealNode::start_kubelet`]).
    ///
    /// Errors: the script's output.
    pub fn restart(mut self) -> anyhow::Result<()> {
        match self.node.take() {
            Some(node) => node.start_kubelet(),
            None => Ok(()),
        }
    }
}

impl Drop for KubeletDown<'_> {
    fn drop(&mut self) {
        if let Some(node) = self.node.take()
            && let Err(e) = node.start_kubelet()
        {
            eprintln!("could not start the kubelet again after a failed test: {e:#}");
        }
    }
}
