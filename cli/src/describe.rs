//! `umcp describe TOOL` (and `umcp call TOOL --help`): a tool's signature, description,
//! parameters with their types, defaults and descriptions, its annotations, its output and
//! whether it runs as a task, or the tool as JSON.

use serde_json::json;
use umcp::types::Tool;

use crate::exit::Exit;
use crate::output::say;
use crate::target::Target;
use crate::{listing, shape, shown};

impl Target<'_> {
    /// `describe TOOL`: the tool the servers list under that name; a name none lists is a
    /// usage error with the closest one.
    pub fn describe(&self, name: &str) -> Result<(), Exit> {
        let listing = self.tools();
        let Some(found) = listing.tools.iter().find(|t| t.name == name) else {
            let failed = listing.failed.iter().map(|(s, e)| (s.as_str(), e));
            let code = self.report_failed("tools", failed);
            if code != 0 {
                return Err(Exit(code, String::new()));
            }
            let names = listing.tools.iter().map(|t| t.name.as_str()).collect();
            listing::unlisted("tool", name, names)?;
            return Ok(());
        };
        if self.out.json {
            let signature = shape::signature(name, found.tool.input_schema.as_value());
            let row = json!({"name": name, "server": found.server, "signature": signature,
                             "tool": found.tool});
            say(&crate::output::pretty(&row));
            return Ok(());
        }
        say(&text(name, &found.tool));
        Ok(())
    }
}

/// The description of `tool`, called `name`, every text the server wrote escaped.
fn text(name: &str, tool: &Tool) -> String {
    let schema = tool.input_schema.as_value();
    let mut out = shown::line(&shape::signature(name, schema));
    let about = [tool.title.as_deref(), tool.description.as_deref()];
    for text in about.into_iter().flatten().filter(|t| !t.trim().is_empty()) {
        out += &format!("\n  {}", shown::block(text.trim_end()));
    }
    let params = shape::params(schema);
    if !params.is_empty() {
        out += "\n\nparameters:";
        let rows: Vec<[String; 4]> = params.iter().map(param_row).collect();
        let width = |i: usize| rows.iter().map(|r| r[i].chars().count()).max().unwrap_or(0);
        let (names, kinds, needs) = (width(0), width(1), width(2));
        for [name, kind, need, about] in rows {
            let line = format!("  {name:<names$}  {kind:<kinds$}  {need:<needs$}  {about}");
            out += &format!("\n{}", line.trim_end());
        }
    }
    if let Some(annotations) = annotations(tool) {
        out += &format!("\n\nannotations: {annotations}");
    }
    if let Some(output) = tool.output_schema.as_ref() {
        let shape = shape::signature("", output.as_value());
        let fields = shape.trim_start_matches('(').trim_end_matches(')');
        out += &format!("\noutput: {{{}}}", shown::line(fields));
    }
    if let Some(support) = task_support(tool) {
        out += &format!("\nruns as a task: {}", shown::line(support));
    }
    out
}

/// One parameter's row: name, type, whether it is required (or its default), description.
fn param_row(param: &shape::Param<'_>) -> [String; 4] {
    let need = match (param.required, param.default()) {
        (true, _) => "required".to_owned(),
        (false, Some(default)) => format!("default {default}"),
        (false, None) => "optional".to_owned(),
    };
    let about = param.description().unwrap_or_default();
    let about = about.lines().next().unwrap_or_default();
    [
        shown::line(param.name),
        shown::line(&param.kind),
        shown::line(&need),
        shown::line(about),
    ]
}

/// The tool's annotations as words (`read-only, idempotent`), when it has any.
fn annotations(tool: &Tool) -> Option<String> {
    let a = tool.annotations.as_ref()?;
    let pairs = [
        (a.read_only_hint, "read-only", "may change things"),
        (a.destructive_hint, "destructive", "not destructive"),
        (a.idempotent_hint, "idempotent", "not idempotent"),
        (
            a.open_world_hint,
            "reaches the outside world",
            "closed world",
        ),
    ];
    let words: Vec<&str> = pairs
        .iter()
        .filter_map(|(hint, yes, no)| hint.map(|h| if h { *yes } else { *no }))
        .collect();
    (!words.is_empty()).then(|| words.join(", "))
}

/// The tool's `execution.taskSupport` (`forbidden`, `optional`, `required`), if it says.
fn task_support(tool: &Tool) -> Option<&str> {
    tool.execution.as_ref()?.get("taskSupport")?.as_str()
}
