//! Running `nvidia-smi` and reading its CSV output.

use std::fmt;
use std::process::Command;

/// The arguments of the query: index, product name and total memory of every GPU, as CSV without a header and
/// without units (memory in MiB).
pub const QUERY_ARGS: &[&str] = &[
    "--query-gpu=index,name,memory.total",
    "--format=csv,noheader,nounits",
];

/// One GPU as `nvidia-smi` reports it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Gpu {
    /// `index`: the device's index in nvidia-smi's (PCI bus) order.
    pub index: u32,
    /// `name`: the product name, e.g. `NVIDIA H100 80GB HBM3`.
    pub name: String,
    /// `memory.total`: installed memory in MiB (2^20 bytes).
    pub memory_total_mib: u64,
}

impl fmt::Display for Gpu {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} {} {} MiB",
            self.index, self.name, self.memory_total_mib
        )
    }
}

/// Why a line of `nvidia-smi` output could not be read.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum ParseError {
    /// The output had no GPU line at all.
    #[error("no GPU listed")]
    Empty,
    /// A line did not have the three fields `index, name, memory.total`.
    #[error("line {line}: expected 3 fields (index, name, memory.total), got {got}: {text:?}")]
    Fields {
        /// 1-based line number.
        line: usize,
        /// Fields found.
        got: usize,
        /// The line.
        text: String,
    },
    /// A field was not a number (e.g. `[N/A]`, `[Not Supported]`, or units left in).
    #[error("line {line}: {field} is {value:?}, not a whole number")]
    Number {
        /// 1-based line number.
        line: usize,
        /// `index` or `memory.total`.
        field: &'static str,
        /// The field's text.
        value: String,
    },
}

/// Parses the output of `nvidia-smi` with [`QUERY_ARGS`]: one line per GPU, fields separated by `", "`. Blank lines
/// are skipped. Errors: [`ParseError`] naming the first bad line.
pub fn parse_query_gpu(output: &str) -> Result<Vec<Gpu>, ParseError> {
    let mut gpus = Vec::new();
    for (i, text) in output.lines().enumerate() {
        let line = i + 1;
        if text.trim().is_empty() {
            continue;
        }
        // Product names have no commas; split on the last ones anyway so a name with one still parses.
        let fields: Vec<&str> = text.split(',').map(str::trim).collect();
        if fields.len() < 3 {
            return Err(ParseError::Fields {
                line,
                got: fields.len(),
                text: text.to_string(),
            });
        }
        let number = |field: &'static str, value: &str| {
            value.parse::<u64>().map_err(|_| ParseError::Number {
                line,
                field,
                value: value.to_string(),
            })
        };
        let index = number("index", fields[0])?;
        let memory_total_mib = number("memory.total", fields[fields.len() - 1])?;
        let index = u32::try_from(index).map_err(|_| ParseError::Number {
            line,
            field: "index",
            value: fields[0].to_string(),
        })?;
        let name = fields[1..fields.len() - 1].join(", ");
        gpus.push(Gpu {
            index,
            name,
            memory_total_mib,
        });
    }
    if gpus.is_empty() {
        return Err(ParseError::Empty);
    }
    Ok(gpus)
}

/// Runs `program` (normally `nvidia-smi`) with [`QUERY_ARGS`] and returns its standard output. Errors: one line
/// saying why there is no output (not found on PATH, not executable, non-zero exit with its stderr).
pub fn run_nvidia_smi(program: &str) -> Result<String, String> {
    let output = Command::new(program).args(QUERY_ARGS).output().map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => format!(
            "{program} not found: the container has no NVIDIA driver utilities (does the pod request nvidia.com/gpu, and \
             does the node's container runtime inject the driver?)"
        ),
        _ => format!("{program} could not start: {e}"),
    })?;
    if !output.status.success() {
        let stderr = String::from_utf8_lossy(&output.stderr);
        let stdout = String::from_utf8_lossy(&output.stdout);
        let said = if stderr.trim().is_empty() {
            stdout.trim().to_string()
        } else {
            stderr.trim().to_string()
        };
        return Err(format!("{program} exited with {}: {said}", output.status));
    }
    String::from_utf8(output.stdout)
        .map_err(|_| format!("{program} printed output that is not UTF-8"))
}
