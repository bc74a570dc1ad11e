//! A process's memory and CPU from `/proc/PID/status` and `/proc/PID/stat`.

use anyhow::Context as _;
use serde::Serialize;

/// Memory and CPU of a process at one moment.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct Sample {
    /// Resident set size (`VmRSS`), bytes.
    pub rss: u64,
    /// Peak resident set size so far (`VmHWM`), bytes.
    pub hwm: u64,
    /// CPU time used so far (`utime + stime`), seconds.
    pub cpu: f64,
    /// Open sockets (`/proc/PID/fd` entries linking to `socket:`): mostly pooled connections to the API server.
    pub sockets: usize,
}

/// Reads the sample of process `pid`.
///
/// Errors: the process is gone or `/proc` is not readable.
pub fn sample(pid: u32) -> anyhow::Result<Sample> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status"))
        .with_context(|| format!("reading /proc/{pid}/status"))?;
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .with_context(|| format!("reading /proc/{pid}/stat"))?;
    Ok(Sample {
        rss: kib(&status, "VmRSS:")? * 1024,
        hwm: kib(&status, "VmHWM:")? * 1024,
        cpu: cpu_ticks(&stat)? as f64 / ticks_per_second(),
        sockets: sockets(pid)?,
    })
}

/// Number of the process's file descriptors that are sockets.
fn sockets(pid: u32) -> anyhow::Result<usize> {
    let dir = std::fs::read_dir(format!("/proc/{pid}/fd"))
        .with_context(|| format!("reading /proc/{pid}/fd"))?;
    Ok(dir
        .filter_map(Result::ok)
        .filter_map(|entry| std::fs::read_link(entry.path()).ok())
        .filter(|target| target.to_string_lossy().starts_with("socket:"))
        .count())
}

/// The `kB` value of line `key` in `/proc/PID/status`.
fn kib(status: &str, key: &str) -> anyhow::Result<u64> {
    status
        .lines()
        .find_map(|line| line.strip_prefix(key))
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|value| value.parse().ok())
        .with_context(|| format!("no {key} in /proc/PID/status"))
}

/// `utime + stime` (fields 14 and 15 of `/proc/PID/stat`, in clock ticks). The command name (field 2) may hold
/// spaces, so fields are counted after its closing parenthesis: there field 3 (state) is the first.
fn cpu_ticks(stat: &str) -> anyhow::Result<u64> {
    let rest = stat
        .rsplit_once(')')
        .map(|(_, rest)| rest)
        .context("malformed /proc/PID/stat")?;
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let field = |n: usize| -> anyhow::Result<u64> {
        fields
            .get(n - 3)
            .and_then(|v| v.parse().ok())
            .with_context(|| format!("no field {n} in /proc/PID/stat"))
    };
    Ok(field(14)? + field(15)?)
}

/// Clock ticks per second (`getconf CLK_TCK`; 100 on Linux when getconf is missing).
fn ticks_per_second() -> f64 {
    static TICKS: std::sync::OnceLock<f64> = std::sync::OnceLock::new();
    *TICKS.get_or_init(|| {
        std::process::Command::new("getconf")
            .arg("CLK_TCK")
            .output()
            .ok()
            .and_then(|out| String::from_utf8(out.stdout).ok())
            .and_then(|text| text.trim().parse().ok())
            .unwrap_or(100.0)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_ticks_skip_a_command_name_with_spaces() {
        let stat = "42 (model fleet) S 1 42 42 0 -1 4194560 100 0 0 0 7 3 0 0 20 0 4 0 100 0 0";
        assert_eq!(cpu_ticks(stat).unwrap(), 10);
    }

    #[test]
    fn reads_kib_lines() {
        let status = "Name:\tx\nVmHWM:\t  2048 kB\nVmRSS:\t  1024 kB\n";
        assert_eq!(kib(status, "VmRSS:").unwrap(), 1024);
        assert_eq!(kib(status, "VmHWM:").unwrap(), 2048);
    }
}
