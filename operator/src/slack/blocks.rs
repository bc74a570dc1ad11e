//! Block Kit replies (pure): a header, short sections, aligned monospace tables (they render the same on desktop and
//! mobile, and several fit in one message, unlike the `table` block), and a context line saying what to type next.
//! Every reply carries a plain `text` too, for notifications and screen readers.

use slack_morphism::prelude::{
    SlackBlock, SlackBlockMarkDownText, SlackBlockPlainText, SlackBlockText, SlackContextBlock,
    SlackContextBlockElement, SlackHeaderBlock, SlackSectionBlock,
};

use super::command::{Feature, ParseError};
use super::inventory::{Inventory, RunDetail, RunRow};

/// Who sees a reply.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Visibility {
    /// The channel (changes: the team sees who changed what).
    Public,
    /// Only the person who asked (reads, refusals, errors).
    Private,
}

/// A message to post.
#[derive(Clone, Debug, PartialEq)]
pub struct Reply {
    /// Plain text: the notification and fallback.
    pub text: String,
    /// The Block Kit blocks.
    pub blocks: Vec<SlackBlock>,
    /// Who sees it.
    pub visibility: Visibility,
}

/// Longest text of one section or context element (Slack's limit is 3000 characters; Slack refuses the whole message
/// with `invalid_blocks` past it).
const SECTION_LIMIT: usize = 2800;

/// Longest text of a header block (Slack's limit: 150 characters).
const HEADER_LIMIT: usize = 150;

/// `text` cut to at most `limit` characters (not bytes: never inside a character), ending in `…` when cut.
fn cut(text: String, limit: usize) -> String {
    match text.char_indices().nth(limit.saturating_sub(1)) {
        Some((end, _)) if text.chars().count() > limit => format!("{}…", &text[..end]),
        _ => text,
    }
}

/// Text from the cluster (condition messages, API errors, field manager names) made literal in Slack's `mrkdwn`:
/// `&`, `<` and `>` are its control characters (`<!channel>` would notify a whole channel), escaped as Slack's
/// "Formatting text for app surfaces" asks.
pub fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

fn section(text: impl Into<String>) -> SlackBlock {
    SlackSectionBlock::new()
        .with_text(SlackBlockText::MarkDown(SlackBlockMarkDownText::new(cut(
            text.into(),
            SECTION_LIMIT,
        ))))
        .into()
}

fn header(text: impl Into<String>) -> SlackBlock {
    let text = cut(text.into(), HEADER_LIMIT);
    SlackHeaderBlock::new(SlackBlockPlainText::new(text).into()).into()
}

fn context(text: impl Into<String>) -> SlackBlock {
    SlackContextBlock::new(vec![SlackContextBlockElement::MarkDown(
        SlackBlockMarkDownText::new(cut(text.into(), SECTION_LIMIT)),
    )])
    .into()
}

fn reply(text: String, blocks: Vec<SlackBlock>, visibility: Visibility) -> Reply {
    Reply {
        text,
        blocks,
        visibility,
    }
}

/// Columns padded to their widest cell; the first row is the header.
fn table(rows: &[Vec<String>]) -> Vec<String> {
    let columns = rows.first().map_or(0, Vec::len);
    let widths: Vec<usize> = (0..columns)
        .map(|c| rows.iter().map(|r| r[c].chars().count()).max().unwrap_or(0))
        .collect();
    rows.iter()
        .map(|row| {
            let cells: Vec<String> = row
                .iter()
                .zip(&widths)
                .map(|(cell, width)| format!("{cell:<width$}"))
                .collect();
            escape(cells.join("  ").trim_end())
        })
        .collect()
}

/// A titled monospace table, cut (with a count of what was left out) to fit one section.
fn table_section(title: &str, empty: &str, rows: Vec<Vec<String>>) -> SlackBlock {
    let total = rows.len() - 1;
    if total == 0 {
        return section(format!("*{title}*: {empty}"));
    }
    let mut body = String::new();
    let mut shown = 0usize;
    for line in table(&rows) {
        if body.len() + line.len() + 1 > SECTION_LIMIT {
            break;
        }
        body.push_str(&line);
        body.push('\n');
        shown += 1;
    }
    let shown = shown.saturating_sub(1);
    let more = if shown < total {
        format!("\n…and {} more", total - shown)
    } else {
        String::new()
    };
    section(format!("*{title}* ({total})\n```{body}```{more}"))
}

/// `help`: every command, with the surface's prefix (`/fleet `, `@bot ` or nothing in a DM).
pub fn help(prefix: &str) -> Reply {
    let p = prefix;
    let commands = format!(
        "`{p}inventory [NAMESPACE]` — inference services, training runs and datasets\n\
         `{p}start NAME` / `{p}stop NAME` — set an InferenceService's intent to active / suspended\n\
         `{p}training list [NAMESPACE]` — training runs with phase and age\n\
         `{p}training status NAME` — one run in detail\n\
         `{p}training suspend NAME` / `{p}training resume NAME` — pause or resume a run\n\
         `{p}training cancel NAME confirm` — stop a run for good\n\
         `{p}cost`, `{p}snapshot`, `{p}quota` — not enabled yet"
    );
    reply(
        "Model Fleet commands".to_owned(),
        vec![
            header("Model Fleet"),
            section(commands),
            context(
                "NAME is an object in the default namespace, or NAMESPACE/NAME. Add `force` to `start`, `stop`, \
                 `suspend` or `resume` to take the intent over from another owner such as Terraform.",
            ),
        ],
        Visibility::Private,
    )
}

/// `inventory`.
pub fn inventory(inv: &Inventory) -> Reply {
    let mut services = vec![vec![
        "NAME".into(),
        "INTENT".into(),
        "READY".into(),
        "CLASS".into(),
        "STATE".into(),
        "URL".into(),
    ]];
    services.extend(inv.services.iter().map(|s| {
        vec![
            s.name.clone(),
            s.intent.clone(),
            s.ready.clone(),
            s.capacity_class.clone(),
            s.state.clone(),
            s.url.clone(),
        ]
    }));
    let mut datasets = vec![vec!["NAME".into(), "VERSION".into(), "USED BY".into()]];
    datasets.extend(inv.datasets.iter().map(|d| {
        let used = if d.used_by.is_empty() {
            "-".to_owned()
        } else {
            d.used_by.join(", ")
        };
        vec![d.name.clone(), d.version.clone(), used]
    }));
    let text = format!(
        "{}: {} inference services, {} training runs, {} datasets",
        inv.namespace,
        inv.services.len(),
        inv.runs.len(),
        inv.datasets.len()
    );
    let blocks = vec![
        header(format!("Inventory of {}", inv.namespace)),
        table_section("Inference services", "none", services),
        table_section("Training runs", "none", run_rows(&inv.runs)),
        table_section("Datasets", "none", datasets),
    ];
    reply(text, blocks, Visibility::Private)
}

fn run_rows(runs: &[RunRow]) -> Vec<Vec<String>> {
    let mut rows = vec![vec!["NAME".into(), "PHASE".into(), "AGE".into()]];
    rows.extend(
        runs.iter()
            .map(|r| vec![r.name.clone(), r.phase.clone(), r.age.clone()]),
    );
    rows
}

/// `training list`.
pub fn training_list(namespace: &str, runs: &[RunRow]) -> Reply {
    reply(
        format!("{namespace}: {} training runs", runs.len()),
        vec![
            header(format!("Training runs in {namespace}")),
            table_section("Training runs", "none", run_rows(runs)),
        ],
        Visibility::Private,
    )
}

/// `training status`.
pub fn training_status(run: &RunDetail) -> Reply {
    let datasets = if run.datasets.is_empty() {
        "-".to_owned()
    } else {
        run.datasets.join(", ")
    };
    let mut blocks = vec![
        header(format!("Training run {}/{}", run.namespace, run.name)),
        section(format!(
            "*Phase:* {}\n*Intent:* {}\n*Age:* {}\n*Job:* `{}`\n*Pods:* {}\n*Datasets:* {}",
            run.phase, run.intent, run.age, run.job, run.pods, datasets
        )),
    ];
    if !run.problems.is_empty() {
        let problems: Vec<String> = run.problems.iter().map(|p| escape(p)).collect();
        blocks.push(section(format!(
            ":warning: {}",
            problems.join("\n:warning: ")
        )));
    }
    reply(
        format!("{}/{}: {}", run.namespace, run.name, run.phase),
        blocks,
        Visibility::Private,
    )
}

/// A change that was made, for the channel to see.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Change {
    /// The Slack user id who asked.
    pub user: String,
    /// `stopped`, `started`, `suspended`, `resumed`, `cancelled`.
    pub verb: &'static str,
    /// `InferenceService` or `TrainingRun`.
    pub kind: &'static str,
    /// Namespace.
    pub namespace: String,
    /// Name.
    pub name: String,
    /// The field written and its old and new values, e.g. `spec.intent: active → suspended`.
    pub field: String,
    /// What happens next, one sentence.
    pub effect: &'static str,
    /// Taken over from other field managers with `force` (their names).
    pub forced_from: Vec<String>,
}

/// A change made.
pub fn changed(change: &Change) -> Reply {
    let text = format!(
        "<@{}> {} {} {}/{}",
        change.user, change.verb, change.kind, change.namespace, change.name
    );
    let mut blocks = vec![
        section(format!(":white_check_mark: {text}\n`{}`", change.field)),
        context(change.effect),
    ];
    if !change.forced_from.is_empty() {
        blocks.push(context(format!(
            ":warning: Taken over from {} with `force`: they will report a conflict or a change on their next \
             apply until their configuration says the same.",
            escape(&change.forced_from.join(", "))
        )));
    }
    reply(text, blocks, Visibility::Public)
}

/// Nothing to change (the object is already as asked).
pub fn unchanged(kind: &str, namespace: &str, name: &str, state: &str) -> Reply {
    let text = format!("{kind} {namespace}/{name} is already {state}: nothing changed.");
    reply(text.clone(), vec![section(text)], Visibility::Private)
}

/// Something the bot cannot do: what went wrong, optional detail, and what to type instead.
pub fn problem(
    summary: &str,
    detail: Option<&str>,
    try_instead: Option<&str>,
    prefix: &str,
) -> Reply {
    let mut blocks = vec![section(format!(":no_entry: {summary}"))];
    if let Some(detail) = detail {
        blocks.push(context(detail.to_owned()));
    }
    if let Some(instead) = try_instead {
        blocks.push(context(format!("Try `{prefix}{instead}`")));
    }
    reply(summary.to_owned(), blocks, Visibility::Private)
}

/// A command that does not parse.
pub fn parse_error(error: &ParseError, prefix: &str) -> Reply {
    problem(&error.problem, None, error.try_instead.as_deref(), prefix)
}

/// The ack of a command that continues in the background.
pub fn working(text: &str) -> Reply {
    let text = format!(":hourglass_flowing_sand: Working on `{}`…", text.trim());
    reply(text.clone(), vec![context(text)], Visibility::Private)
}

/// `cost`, `snapshot`, `quota`.
pub fn not_enabled(feature: Feature, prefix: &str) -> Reply {
    problem(
        &format!(
            "`{}` is not enabled in this Model Fleet version.",
            feature.word()
        ),
        Some("It arrives with its own release; nothing was changed."),
        Some("help"),
        prefix,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::slack::inventory::{DatasetRow, ServiceRow};

    fn json(reply: &Reply) -> String {
        serde_json::to_string(&reply.blocks).unwrap()
    }

    fn service(name: &str) -> ServiceRow {
        ServiceRow {
            name: name.into(),
            intent: "active".into(),
            ready: "1/1".into(),
            capacity_class: "80gi".into(),
            url: "http://x/".into(),
            state: "Ready".into(),
        }
    }

    #[test]
    fn inventory_is_aligned_tables() {
        let inv = Inventory {
            namespace: "team-a".into(),
            services: vec![service("llama"), service("qwen-coder")],
            runs: vec![],
            datasets: vec![DatasetRow {
                name: "corpus".into(),
                version: "3".into(),
                used_by: vec!["ft".into()],
            }],
        };
        let reply = inventory(&inv);
        assert_eq!(
            reply.text,
            "team-a: 2 inference services, 0 training runs, 1 datasets"
        );
        assert_eq!(reply.visibility, Visibility::Private);
        let blocks = json(&reply);
        assert!(blocks.contains(r#""type":"header""#), "{blocks}");
        assert!(
            blocks.contains("NAME        INTENT  READY  CLASS  STATE  URL\\nllama       active  1/1    80gi   Ready  http://x/"),
            "{blocks}"
        );
        assert!(blocks.contains("*Training runs*: none"), "{blocks}");
        assert!(blocks.contains("corpus  3        ft"), "{blocks}");
    }

    #[test]
    fn long_tables_are_cut_with_a_count() {
        let inv = Inventory {
            namespace: "big".into(),
            services: (0..200)
                .map(|i| service(&format!("service-{i:03}")))
                .collect(),
            ..Inventory::default()
        };
        let blocks = json(&inventory(&inv));
        assert!(blocks.contains("…and "), "{blocks}");
        for block in &inventory(&inv).blocks {
            assert!(serde_json::to_string(block).unwrap().len() < 3100);
        }
    }

    #[test]
    fn cluster_text_is_literal_and_cut_to_what_slack_accepts() {
        let run = RunDetail {
            namespace: "team-a".into(),
            name: "ft".into(),
            intent: "active".into(),
            phase: "Pending".into(),
            age: "5m".into(),
            job: "ft".into(),
            pods: "0/1".into(),
            datasets: Vec::new(),
            // A condition message may be up to 32 KiB; this one also holds mrkdwn's control characters.
            problems: vec![format!(
                "<!channel> node-selector <none> & {}",
                "é".repeat(5000)
            )],
        };
        let reply = training_status(&run);
        let blocks = json(&reply);
        assert!(
            blocks.contains("&lt;!channel&gt; node-selector &lt;none&gt; &amp; éé"),
            "{blocks}"
        );
        for block in &reply.blocks {
            let text = serde_json::to_value(block).unwrap();
            let text = text["text"]["text"].as_str().unwrap_or_default();
            assert!(text.chars().count() <= SECTION_LIMIT, "{}", text.len());
        }
        assert!(blocks.contains("é…"), "cut at a character, marked");
        assert_eq!(cut("short".into(), 10), "short");
        assert_eq!(cut("abcdef".into(), 4), "abc…");
        assert_eq!(cut("abcd".into(), 4), "abcd");
    }

    #[test]
    fn problems_say_what_to_type() {
        let reply = parse_error(
            &ParseError {
                problem: "I do not know the command `x`.".into(),
                try_instead: Some("help".into()),
            },
            "/fleet ",
        );
        assert_eq!(reply.text, "I do not know the command `x`.");
        assert!(json(&reply).contains("Try `/fleet help`"));
        assert!(json(&help("/fleet ")).contains("`/fleet stop NAME`"));
        assert!(json(&not_enabled(Feature::Quota, "")).contains("`quota` is not enabled"));
    }

    #[test]
    fn changes_are_public_and_name_who_and_what() {
        let reply = changed(&Change {
            user: "U1".into(),
            verb: "stopped",
            kind: "InferenceService",
            namespace: "team-a".into(),
            name: "llama".into(),
            field: "spec.intent: active → suspended".into(),
            effect: "The operator scales it to 0 replicas; nothing is deleted.",
            forced_from: vec!["terraform-modelfleet".into(), "<!channel>".into()],
        });
        assert_eq!(reply.visibility, Visibility::Public);
        assert!(
            json(&reply).contains("terraform-modelfleet, &lt;!channel&gt;"),
            "a field manager's name never pings anyone"
        );
        assert_eq!(reply.text, "<@U1> stopped InferenceService team-a/llama");
        assert!(json(&reply).contains("Taken over from terraform-modelfleet"));
    }
}
