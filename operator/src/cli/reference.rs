//! The CLI reference page of the documentation site (`docs/reference/cli.md`), generated from the clap `Command`
//! through clap's own introspection: every subcommand, every visible argument with its value name, default, possible
//! values and environment variable. The test below fails when the committed page is stale; `UPDATE_DOCS=1`
//! (`make docs-generate`) rewrites it.

use clap::{Arg, ArgAction, Command};
use model_fleet_api::reference::paragraph;

/// The Markdown reference of `cmd` and its subcommands (hidden arguments and subcommands left out).
pub fn cli_reference(cmd: &Command) -> String {
    let name = cmd.get_name();
    let mut out = format!(
        "# Command line: `{name}`\n\n<!-- Generated from the clap definition of `{name}` (operator/src/main.rs, \
         operator/src/cli/) by `make docs-generate`; do not edit. -->\n\n{}\n\n`{name} --help` and \
         `{name} SUBCOMMAND --help` print the same text.\n\n| subcommand | what it does |\n| --- | --- |\n",
        about(cmd)
    );
    let subs: Vec<&Command> = cmd.get_subcommands().filter(|s| !s.is_hide_set()).collect();
    for sub in &subs {
        out.push_str(&format!(
            "| [`{}`](#{name}-{}) | {} |\n",
            sub.get_name(),
            sub.get_name(),
            about(sub)
        ));
    }
    for sub in subs {
        out.push_str(&format!(
            "\n## `{name} {}`\n\n{}\n\n",
            sub.get_name(),
            about(sub)
        ));
        out.push_str(&format!("```text\n{}\n```\n\n", usage(name, sub)));
        let args: Vec<&Arg> = sub
            .get_arguments()
            .filter(|a| {
                !a.is_hide_set() && !matches!(a.get_action(), ArgAction::Help | ArgAction::Version)
            })
            .collect();
        if args.is_empty() {
            out.push_str("No options.\n");
        }
        for arg in args {
            out.push_str(&argument(arg));
        }
    }
    out
}

fn about(cmd: &Command) -> String {
    cmd.get_about().map(|a| a.to_string()).unwrap_or_default()
}

fn usage(name: &str, sub: &Command) -> String {
    let mut sub = sub.clone().bin_name(format!("{name} {}", sub.get_name()));
    sub.render_usage()
        .to_string()
        .trim_start_matches("Usage: ")
        .to_string()
}

/// One argument: its spelling with value name, then its help, default, possible values and environment variable.
fn argument(arg: &Arg) -> String {
    let value = arg
        .get_value_names()
        .map(|v| v.iter().map(|n| format!(" <{n}>")).collect::<String>())
        .unwrap_or_else(|| {
            if arg.get_num_args().is_some_and(|n| n.takes_values()) {
                format!(" <{}>", arg.get_id().as_str().to_uppercase())
            } else {
                String::new()
            }
        });
    let mut spellings = Vec::new();
    if let Some(s) = arg.get_short() {
        spellings.push(format!("-{s}"));
    }
    if let Some(l) = arg.get_long() {
        spellings.push(format!("--{l}{value}"));
    }
    if spellings.is_empty() {
        spellings.push(value.trim().to_string());
    }
    let mut facts = Vec::new();
    if arg.is_required_set() {
        facts.push("required".to_string());
    }
    if matches!(arg.get_action(), ArgAction::Append) {
        facts.push("repeatable".to_string());
    }
    let defaults: Vec<String> = arg
        .get_default_values()
        .iter()
        .map(|d| d.to_string_lossy().into_owned())
        .collect();
    if !defaults.is_empty() && !matches!(arg.get_action(), ArgAction::SetTrue | ArgAction::SetFalse)
    {
        facts.push(format!("default `{}`", defaults.join(",")));
    }
    let possible: Vec<String> = arg
        .get_possible_values()
        .iter()
        .filter(|p| !p.is_hide_set())
        .map(|p| format!("`{}`", p.get_name()))
        .collect();
    if !possible.is_empty() {
        facts.push(format!("one of {}", possible.join(", ")));
    }
    if let Some(env) = arg.get_env() {
        facts.push(format!("environment `{}`", env.to_string_lossy()));
    }
    let help = arg
        .get_long_help()
        .or(arg.get_help())
        .map(|h| h.to_string())
        .unwrap_or_default();
    let facts = if facts.is_empty() {
        String::new()
    } else {
        format!(" ({})", facts.join("; "))
    };
    let spelled: Vec<String> = spellings.iter().map(|s| format!("`{s}`")).collect();
    format!("- {}: {}{}\n", spelled.join(", "), paragraph(&help), facts)
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use clap::CommandFactory;

    use super::*;

    #[test]
    fn cli_reference_page_is_current() {
        let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../docs/reference/cli.md");
        let page = cli_reference(&crate::Cli::command());
        if std::env::var_os("UPDATE_DOCS").is_some_and(|v| v == "1") {
            std::fs::write(&path, &page).unwrap();
            return;
        }
        let on_disk = std::fs::read_to_string(&path).unwrap_or_default();
        assert!(
            on_disk == page,
            "{} is stale: regenerate with `make docs-generate`",
            path.display()
        );
    }

    #[test]
    fn cli_reference_leaves_out_hidden_test_hooks_and_names_every_subcommand() {
        let page = cli_reference(&crate::Cli::command());
        assert!(!page.contains("test-failpoint"), "{page}");
        for sub in ["run", "crd", "render", "slack"] {
            assert!(
                page.contains(&format!("## `model-fleet-operator {sub}`")),
                "{sub}"
            );
        }
        assert!(page.contains("`--lease-name <NAME>`"), "{page}");
    }
}
