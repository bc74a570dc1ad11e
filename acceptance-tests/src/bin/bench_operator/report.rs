//! The report: a Markdown table per N, the targets of issue 17 each with `holds` / `MISSED` and the measured value,
//! whether cost looks linear in N, and one JSON line per N with every figure.

use std::fmt::Write as _;

use serde_json::{Value, json};

use crate::Args;
use crate::floor::FloorFigures;
use crate::operator_phase::OperatorFigures;

const MIB: f64 = 1024.0 * 1024.0;

/// Target: operator convergence at most this many times the floor's.
pub const TARGET_RATIO: f64 = 1.3;
/// Target: operator RSS at 1000 services with their children, MiB.
pub const TARGET_RSS_MIB: f64 = 64.0;
/// The N of the RSS target.
pub const TARGET_RSS_N: usize = 1000;
/// "Linear" here: the per-object cost at the largest N is at most this many times the one at the smallest N.
pub const LINEAR_TOLERANCE: f64 = 1.5;

/// Both phases of one N.
#[derive(Clone, Debug)]
pub struct Row {
    /// Number of InferenceServices.
    pub n: usize,
    /// The operator phase.
    pub operator: OperatorFigures,
    /// The floor.
    pub floor: FloorFigures,
    /// The convergence ratio of every run of this N, ascending (one entry without `--repeat`).
    pub ratios: Vec<f64>,
    /// The no-op writes of every run of this N, in run order.
    pub noop_writes: Vec<usize>,
}

/// The run with the median convergence ratio of `runs` (the lower middle one of an even count), carrying every run's
/// ratio and no-op writes. Panics on no runs (`--repeat` is at least 1).
pub fn median(mut runs: Vec<Row>) -> Row {
    let noop_writes: Vec<usize> = runs.iter().flat_map(|r| r.noop_writes.clone()).collect();
    runs.sort_by(|a, b| a.ratio().total_cmp(&b.ratio()));
    let ratios: Vec<f64> = runs.iter().map(Row::ratio).collect();
    let mut row = runs.swap_remove((runs.len() - 1) / 2);
    row.ratios = ratios;
    row.noop_writes = noop_writes;
    row
}

impl Row {
    /// One run of `n`.
    pub fn new(n: usize, operator: OperatorFigures, floor: FloorFigures) -> Row {
        let mut row = Row {
            n,
            operator,
            floor,
            ratios: Vec::new(),
            noop_writes: Vec::new(),
        };
        row.ratios.push(row.ratio());
        row.noop_writes.push(row.operator.writes_noop.attempts());
        row
    }

    /// Operator seconds / floor seconds.
    pub fn ratio(&self) -> f64 {
        self.operator.seconds / self.floor.seconds
    }

    /// Operator writes per object on create (Lease renewals excluded).
    pub fn writes_per_object(&self) -> f64 {
        self.operator.writes_create.total as f64 / self.n as f64
    }

    /// Operator RSS at convergence, MiB.
    pub fn rss_mib(&self) -> f64 {
        self.operator.converged.rss as f64 / MIB
    }

    /// (RSS at convergence - idle RSS) / N, KiB.
    pub fn per_object_kib(&self) -> f64 {
        (self.operator.converged.rss as f64 - self.operator.idle.rss as f64)
            / self.n as f64
            / 1024.0
    }

    /// Peak RSS (VmHWM) of either operator process: the converging one and the one started again (MiB). A memory
    /// limit applies to the peak, so the RSS target is judged on it.
    pub fn peak_mib(&self) -> f64 {
        let op = &self.operator;
        op.converged.hwm.max(op.after_latency.hwm) as f64 / MIB
    }

    /// Peak RSS (VmHWM) of the operator started again over N converged objects, through the no-op window (its
    /// watches' initial lists and the start-up reconcile of every object), MiB.
    pub fn restart_peak_mib(&self) -> f64 {
        self.operator.after_resync.hwm as f64 / MIB
    }

    /// Operator CPU seconds from the first create to convergence.
    pub fn cpu_seconds(&self) -> f64 {
        self.operator.converged.cpu - self.operator.idle.cpu
    }

    /// Every figure as one JSON object.
    pub fn to_json(&self, args: &Args) -> Value {
        let latency = &self.operator.latency;
        json!({
            "bench": "operator",
            "n": self.n,
            "unix_time": std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_secs())
                .unwrap_or_default(),
            "concurrency": args.concurrency,
            "resync_seconds": args.resync_seconds,
            "operator_binary": args.operator_binary(),
            "ratio": self.ratio(),
            "writes_per_object_create": self.writes_per_object(),
            "writes_noop": self.operator.writes_noop.attempts(),
            "rss_mib": self.rss_mib(),
            "peak_mib": self.peak_mib(),
            "restart_peak_mib": self.restart_peak_mib(),
            "per_object_kib": self.per_object_kib(),
            "cpu_seconds": self.cpu_seconds(),
            "seconds_per_object": self.operator.seconds / self.n as f64,
            "latency_p50_ms": latency.percentile(50.0),
            "latency_p99_ms": latency.percentile(99.0),
            "operator": self.operator,
            "floor": self.floor,
        })
    }
}

fn ms(value: Option<f64>) -> String {
    value.map_or_else(|| "-".to_owned(), |v| format!("{v:.0}"))
}

/// The Markdown table of `rows`.
pub fn table(rows: &[Row]) -> String {
    let mut out = String::from(
        "| N | operator s | floor s | ratio | writes/object create | writes no-op | RSS MiB | per-object KiB | CPU s | \
         p50/p99 ms |\n| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n",
    );
    for row in rows {
        let latency = &row.operator.latency;
        let _ = writeln!(
            out,
            "| {} | {:.1} | {:.1} | {:.2} | {:.2} | {} | {:.1} | {:.1} | {:.1} | {}/{}{} |",
            row.n,
            row.operator.seconds,
            row.floor.seconds,
            row.ratio(),
            row.writes_per_object(),
            row.operator.writes_noop.attempts(),
            row.rss_mib(),
            row.per_object_kib(),
            row.cpu_seconds(),
            ms(latency.percentile(50.0)),
            ms(latency.percentile(99.0)),
            if latency.missed > 0 {
                format!(" ({} missed)", latency.missed)
            } else {
                String::new()
            },
        );
    }
    out
}

/// The details behind the table: writes by resource, peaks, the no-op window's reconciles, floor writes.
fn details(rows: &[Row]) -> String {
    let mut out = String::from("\nDetails per N:\n");
    for row in rows {
        let op = &row.operator;
        let per_object: Vec<String> = op
            .writes_create
            .by_resource
            .iter()
            .map(|(resource, count)| format!("{resource} {:.2}", *count as f64 / row.n as f64))
            .collect();
        let _ = writeln!(
            out,
            "- N={}: creates took {:.1} s; {:.2} reconciles/object on create (mean {:.0} ms each); operator \
             writes/object on create: {}; refused on create (retried): {:?}; no-op window {:.0} s with {:.0} \
             reconciles after a restart ({:.2} per object, mean {:.0} ms each), writes {:?}, refused {:?}; Lease renewals not counted; idle RSS {:.1} MiB, peak \
             (VmHWM) {:.1} MiB, RSS after latency phase {:.1} MiB; open sockets idle {} / at convergence {} / after the no-op window {}; CPU of the operator started again, through the no-op window {:.2} s; reconcile \
             errors {:.0}; floor sent {:.1} writes/object, its last write returned at {:.1} s; namespace deletion \
             {:.0} s (operator) / {:.0} s (floor)",
            row.n,
            op.create_seconds,
            op.reconciles.0 / row.n as f64,
            op.reconcile_mean_seconds.0 * 1000.0,
            per_object.join(", "),
            op.writes_create.refused,
            op.noop_window_seconds,
            op.reconciles.1,
            op.reconciles.1 / row.n as f64,
            op.reconcile_mean_seconds.1 * 1000.0,
            op.writes_noop.by_resource,
            op.writes_noop.refused,
            op.idle.rss as f64 / MIB,
            row.peak_mib(),
            op.after_latency.rss as f64 / MIB,
            op.idle.sockets,
            op.converged.sockets,
            op.after_resync.sockets,
            op.after_resync.cpu,
            op.reconcile_errors,
            row.floor.writes_per_object,
            row.floor.last_write_seconds,
            op.delete_seconds,
            row.floor.delete_seconds,
        );
    }
    out
}

fn verdict(holds: bool) -> &'static str {
    if holds { "holds" } else { "MISSED" }
}

/// Convergence ratio and no-op writes, every N.
fn ratio_and_noop(rows: &[Row]) -> String {
    let ratios: Vec<String> = rows
        .iter()
        .map(|r| {
            let runs = if r.ratios.len() > 1 {
                let each: Vec<String> = r.ratios.iter().map(|x| format!("{x:.2}")).collect();
                format!(" (median of {}: {})", r.ratios.len(), each.join(", "))
            } else {
                String::new()
            };
            format!("{:.2} at N={}{runs}", r.ratio(), r.n)
        })
        .collect();
    let ratio_holds = rows.iter().all(|r| r.ratio() <= TARGET_RATIO);
    let noop: Vec<String> = rows
        .iter()
        .map(|r| {
            let resynced = r.operator.reconciles.1 >= r.n as f64;
            let note = if resynced {
                ""
            } else {
                " (not every object resynced in the window)"
            };
            let each: Vec<String> = r.noop_writes.iter().map(usize::to_string).collect();
            format!("{} at N={}{note}", each.join(" + "), r.n)
        })
        .collect();
    let noop_holds = rows.iter().all(|r| r.noop_writes.iter().all(|&w| w == 0));
    format!(
        "- convergence within {TARGET_RATIO}x of the floor: {} ({})\n- 0 writes on a no-op resync at every N: {} \
         ({})\n",
        verdict(ratio_holds),
        ratios.join(", "),
        verdict(noop_holds),
        noop.join(", ")
    )
}

/// RSS at 1000 services: measured when N=1000 ran (judged on the peak, which a memory limit meets first), else
/// extrapolated (idle + per-object bytes x 1000).
fn rss_target(rows: &[Row]) -> String {
    let head =
        format!("- RSS <= {TARGET_RSS_MIB} MiB at {TARGET_RSS_N} services with their children:");
    if let Some(row) = rows.iter().find(|r| r.n == TARGET_RSS_N) {
        let peak = row.peak_mib();
        return format!(
            "{head} {} (peak {peak:.1} MiB; started again over {TARGET_RSS_N} converged services {:.1} MiB; \
             {:.1} MiB at convergence)\n",
            verdict(peak <= TARGET_RSS_MIB),
            row.restart_peak_mib(),
            row.rss_mib(),
        );
    }
    let Some(row) = rows.iter().max_by_key(|r| r.n) else {
        return format!("{head} not measured\n");
    };
    let estimate =
        (row.operator.idle.rss as f64 + row.per_object_kib() * 1024.0 * TARGET_RSS_N as f64) / MIB;
    format!(
        "{head} not measured (N={TARGET_RSS_N} not run); extrapolated from N={}: {estimate:.1} MiB, which would {}\n",
        row.n,
        if estimate <= TARGET_RSS_MIB {
            "hold"
        } else {
            "miss it"
        }
    )
}

/// Seconds and CPU per object at each N, and whether they stay within [`LINEAR_TOLERANCE`].
fn linearity(rows: &[Row]) -> String {
    let per = |f: &dyn Fn(&Row) -> f64| -> Vec<(usize, f64)> {
        rows.iter().map(|r| (r.n, f(r) / r.n as f64)).collect()
    };
    let seconds = per(&|r| r.operator.seconds);
    let cpu = per(&|r| r.cpu_seconds());
    let floor = per(&|r| r.floor.seconds);
    let show = |series: &[(usize, f64)]| -> String {
        series
            .iter()
            .map(|(n, v)| format!("{:.1} ms at N={n}", v * 1000.0))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let grows = |series: &[(usize, f64)]| -> Option<f64> {
        let first = series.iter().min_by_key(|(n, _)| *n)?;
        let last = series.iter().max_by_key(|(n, _)| *n)?;
        (last.0 > first.0).then(|| last.1 / first.1)
    };
    let head = format!(
        "- cost linear in N (per-object cost at the largest N at most {LINEAR_TOLERANCE}x the smallest N's):"
    );
    let verdict_text = match (grows(&seconds), grows(&cpu)) {
        (Some(s), Some(c)) => format!(
            "{} (wall per object x{s:.2}, CPU per object x{c:.2})",
            verdict(s <= LINEAR_TOLERANCE && c <= LINEAR_TOLERANCE)
        ),
        _ => "not measured (needs two values of N)".to_owned(),
    };
    format!(
        "{head} {verdict_text}\n  - operator wall per object: {}\n  - operator CPU per object: {}\n  - floor wall per \
         object: {}\n",
        show(&seconds),
        show(&cpu),
        show(&floor)
    )
}

/// The whole report: table, details, targets.
pub fn render(rows: &[Row], args: &Args) -> String {
    format!(
        "## Operator benchmark (issue 17)\n\nConcurrency {}, resync {} s, operator {}.\n\n{}{}\nTargets:\n{}{}{}",
        args.concurrency,
        args.resync_seconds,
        args.operator_binary().display(),
        table(rows),
        details(rows),
        ratio_and_noop(rows),
        rss_target(rows),
        linearity(rows),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(operator_seconds: f64, noop: usize) -> Row {
        let mut operator = OperatorFigures {
            seconds: operator_seconds,
            ..OperatorFigures::default()
        };
        operator.writes_noop.total = noop;
        let floor = FloorFigures {
            seconds: 10.0,
            ..FloorFigures::default()
        };
        Row::new(300, operator, floor)
    }

    #[test]
    fn median_keeps_the_middle_run_and_every_ratio_and_noop_write() {
        let row = median(vec![run(16.0, 0), run(11.0, 0), run(13.0, 2)]);
        assert!(
            (row.ratio() - 1.3).abs() < 1e-9,
            "the middle run: {}",
            row.ratio()
        );
        assert_eq!(row.ratios.len(), 3);
        assert!(row.ratios.windows(2).all(|w| w[0] <= w[1]));
        assert_eq!(
            row.noop_writes,
            vec![0, 0, 2],
            "a later run's no-op writes are kept"
        );
        let text = ratio_and_noop(std::slice::from_ref(&row));
        assert!(text.contains("median of 3: 1.10, 1.30, 1.60"), "{text}");
        assert!(
            text.contains("0 writes on a no-op resync at every N: MISSED"),
            "{text}"
        );
    }

    #[test]
    fn an_even_count_keeps_the_lower_middle_run() {
        let row = median(vec![run(14.0, 0), run(12.0, 0)]);
        assert!((row.ratio() - 1.2).abs() < 1e-9);
    }

    #[test]
    fn the_rss_target_is_judged_on_the_peak_of_either_process() {
        let row = |converged_hwm: u64, restarted_hwm: u64| {
            let mib = MIB as u64;
            let mut operator = OperatorFigures::default();
            operator.converged.rss = 50 * mib;
            operator.converged.hwm = converged_hwm * mib;
            operator.after_resync.hwm = restarted_hwm * mib;
            operator.after_latency.hwm = restarted_hwm * mib;
            Row::new(TARGET_RSS_N, operator, FloorFigures::default())
        };
        let text = rss_target(&[row(60, 70)]);
        assert!(text.contains(": MISSED (peak 70.0 MiB; started again over 1000 converged services 70.0 MiB; 50.0 MiB at convergence)"), "{text}");
        let text = rss_target(&[row(62, 47)]);
        assert!(text.contains(": holds (peak 62.0 MiB;"), "{text}");
    }
}
