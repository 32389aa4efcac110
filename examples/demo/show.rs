//! The client side of the demo: connects to this same program in server mode and walks
//! through tools, progress, notifications, sampling, elicitation, resources, prompts and
//! completions, then (with the `http` feature) does part of it again over Streamable HTTP.

use std::error::Error;
use std::time::Duration;

use serde_json::json;
use umcp::jsonrpc::{ErrorCode, ErrorObject};
use umcp::types::{
    CompleteReference, CompleteRequestParams, ContentBlock, CreateMessageRequestParams,
    CreateMessageResult, ElicitForm, ElicitRequestParams, ElicitResult, Implementation,
    LoggingLevel, ServerNotification,
};
use umcp::{Client, Options, RequestOptions, StdioConfig};

/// Runs the demo from start to end.
pub fn run() -> Result<(), Box<dyn Error>> {
    // The server is this very program, started again with `--server`.
    let exe = std::env::current_exe()?;
    let server = StdioConfig::new(exe.to_string_lossy()).arg("--server");
    let client = Client::connect_with_options(server, options())?;
    let notes = client.notifications();
    let info = client.server_info();
    let server = format!("{} {}", info.name, info.version);
    let version = client.protocol_version();
    println!("connected to {server}, protocol {version}");

    println!("\ntools:");
    for tool in client.list_all_tools()? {
        let description = tool.description.unwrap_or_default();
        println!("  {:<14} {description}", tool.name);
    }

    println!("\nadd(2, 3):");
    let sum = client.call_tool("add", json!({"a": 2, "b": 3}))?;
    let structured = sum.structured_content.clone().unwrap_or_default();
    println!("  text {:?}, structured content {structured}", sum.text());

    println!("\ntime:");
    let now = client.call_tool("time", json!({}))?;
    println!("  {}", now.text());

    println!("\nslow(3 steps), with progress:");
    let progress = RequestOptions::default().with_progress(|p| {
        let message = p.message.as_deref().unwrap_or_default();
        println!("  {}/{} {message}", p.progress, p.total.unwrap_or_default());
    });
    let slow = client
        .with(&progress)
        .call_tool("slow", json!({"steps": 3, "delay_ms": 200}))?;
    println!("  {}", slow.text());

    println!("\nlog(info), which arrives as a notification:");
    client.set_logging_level(LoggingLevel::Info)?;
    client.call_tool("log", json!({"level": "info", "message": "hello"}))?;
    while let Some(note) = notes.recv_timeout(Duration::from_secs(5)) {
        if let ServerNotification::LoggingMessage(m) = note {
            println!("  [{}] {}", m.level.as_str(), m.data);
            break;
        }
    }

    println!("\nask_llm, which samples our model:");
    let reply = client.call_tool("ask_llm", json!({"prompt": "What is 2 + 2?"}))?;
    println!("  {:?}", reply.text());

    println!("\nask_user, which elicits an answer:");
    let reply = client.call_tool("ask_user", json!({"question": "Shall we go on?"}))?;
    println!("  {:?}", reply.text());

    println!("\na resource, a prompt and a completion:");
    let readme = client.read_resource("demo://text/readme")?;
    let text = readme.contents.first().and_then(|c| c.as_text());
    println!("  demo://text/readme: {:?}", text.unwrap_or_default());
    let greet = client.get_prompt("greet", json!({"name": "Ada"}))?;
    let text = greet.messages.first().and_then(|m| m.content.as_text());
    println!("  greet(name: Ada): {:?}", text.unwrap_or_default());
    let style = CompleteRequestParams::new(CompleteReference::prompt("greet"), "style", "f");
    let styles = client.complete(style)?.completion.values;
    println!("  greet's style completes \"f\" to {styles:?}");

    client.close();
    crate::show_modern::run(&exe)?;
    #[cfg(feature = "http")]
    crate::show_http::run(&exe)?;
    println!("\ndone");
    Ok(())
}

/// The client's name, its answers to the server's sampling and elicitation requests, and
/// tools that run as tasks followed to their result.
pub fn options() -> Options {
    let me = Implementation::new("umcp-demo-client", env!("CARGO_PKG_VERSION"));
    Options::default()
        .with_client_info(me)
        .with_tasks(true)
        .with_sampling_handler(answer_sampling)
        .with_elicitation_handler(answer_elicitation)
}

/// A real client would ask its model; this one gives the same answer to every question.
fn answer_sampling(params: CreateMessageRequestParams) -> Result<CreateMessageResult, ErrorObject> {
    let asked = params.messages.last().map(|m| m.content.text());
    let asked = asked.unwrap_or_default();
    println!("  (sampling) the server asks our model {asked:?}");
    let answer = ContentBlock::text("Four.");
    Ok(CreateMessageResult::new("demo-model", answer))
}

/// A real client would show the form to its user; this one reads the form's fields, fills
/// in the defaults and its own answer, and sends only what the schema allows.
fn answer_elicitation(params: ElicitRequestParams) -> Result<ElicitResult, ErrorObject> {
    let ElicitRequestParams::Form(request) = params else {
        return Ok(ElicitResult::decline());
    };
    println!(
        "  (elicitation) the server asks the user {:?}",
        request.message
    );
    let invalid = |e: umcp::Error| ErrorObject::new(ErrorCode::INVALID_PARAMS, e.to_string());
    let mut form = ElicitForm::new(&request).map_err(invalid)?;
    form.fill_defaults();
    for field in form.fields().to_vec() {
        println!("    {}: {}", field.label(), field.kind.describe());
        if field.name == "answer" {
            form.set_text(&field.name, "yes, from the demo client")
                .map_err(invalid)?;
        }
    }
    // A value the schema does not allow never leaves the client.
    if let Err(e) = form.set("sure", json!("maybe")) {
        println!("    (refused before sending: {e})");
    }
    form.accept().map_err(invalid)
}
