//! A stdio MCP server on rmcp 3.11 that speaks 2026-07-28 only (an `initialize` is refused,
//! naming the version it speaks). Tools: `echo {message}`; `slow {steps, delay_ms}`, reporting
//! progress and stopping when cancelled; `cancellations`, the ids of the calls cancelled so
//! far; `confirm {question}`, which asks for a confirmation in an input round.

use std::borrow::Cow;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmcp::model::*;
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt};
use serde_json::{json, Value};

#[derive(Clone, Default)]
struct Modern {
    cancelled: Arc<Mutex<Vec<Value>>>,
}

fn schema(properties: Value) -> Arc<JsonObject> {
    let schema = json!({ "type": "object", "properties": properties });
    Arc::new(schema.as_object().cloned().unwrap_or_default())
}

fn text(text: impl Into<String>) -> CallToolResponse {
    CallToolResult::success(vec![ContentBlock::text(text.into())]).into()
}

impl Modern {
    async fn slow(&self, args: &JsonObject, context: &RequestContext<RoleServer>) -> CallToolResponse {
        let steps = args.get("steps").and_then(Value::as_u64).unwrap_or(5);
        let delay = args.get("delay_ms").and_then(Value::as_u64).unwrap_or(100);
        let token = context.meta.get_progress_token();
        for step in 1..=steps {
            tokio::select! {
                _ = context.ct.cancelled() => {
                    self.cancelled.lock().unwrap().push(serde_json::to_value(&context.id).unwrap_or_default());
                    return text("cancelled");
                }
                _ = tokio::time::sleep(Duration::from_millis(delay)) => {}
            }
            if let Some(token) = &token {
                let mut progress = ProgressNotificationParam::new(token.clone(), step as f64);
                progress.total = Some(steps as f64);
                let _ = context.peer.notify_progress(progress).await;
            }
        }
        text(format!("finished {steps} steps"))
    }

    fn confirm(&self, request: &CallToolRequestParams) -> Result<CallToolResponse, ErrorData> {
        let answer = request.input_responses.as_ref().and_then(|r| r.get("confirm"));
        match (request.request_state.as_deref(), answer) {
            (Some("asked"), Some(answer)) => Ok(text(format!("confirmed: {}", answer["action"]))),
            _ => {
                let question = request
                    .arguments
                    .as_ref()
                    .and_then(|a| a.get("question"))
                    .and_then(Value::as_str)
                    .unwrap_or("Sure?");
                let schema = json!({"type": "object", "properties": {"ok": {"type": "boolean"}}});
                let ask = ElicitRequest::new(ElicitRequestParams::FormElicitationParams {
                    meta: None,
                    message: question.into(),
                    requested_schema: serde_json::from_value(schema)
                        .map_err(|e| ErrorData::internal_error(e.to_string(), None))?,
                });
                let mut requests = InputRequests::new();
                requests.insert("confirm".to_owned(), InputRequest::Elicitation(ask));
                Ok(InputRequiredResult::new(Some(requests), Some("asked".into())).into())
            }
        }
    }
}

impl ServerHandler for Modern {
    fn get_info(&self) -> ServerConfig {
        let mut info = ServerConfig::new(ServerCapabilities::builder().enable_tools().build());
        info.protocol_version = ProtocolVersion::V_2026_07_28;
        info.server_info = Implementation::new("rmcp-modern-peer", "1.0.0");
        info
    }

    fn supported_protocol_versions(&self) -> Cow<'static, [ProtocolVersion]> {
        Cow::Owned(vec![ProtocolVersion::V_2026_07_28])
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let integer = json!({"type": "integer"});
        let string = json!({"type": "string"});
        Ok(ListToolsResult::with_all_items(vec![
            Tool::new("echo", "Echoes `message` back.", schema(json!({"message": string}))),
            Tool::new("slow", "Works for `steps` steps, reporting progress.", schema(json!({"steps": integer, "delay_ms": integer}))),
            Tool::new("cancellations", "The ids of the calls cancelled so far.", schema(json!({}))),
            Tool::new("confirm", "Asks for a confirmation in an input round.", schema(json!({"question": string}))),
        ]))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let args = request.arguments.clone().unwrap_or_default();
        Ok(match request.name.as_ref() {
            "echo" => text(args.get("message").and_then(Value::as_str).unwrap_or_default()),
            "slow" => self.slow(&args, &context).await,
            "cancellations" => text(json!({ "cancelled": *self.cancelled.lock().unwrap() }).to_string()),
            "confirm" => self.confirm(&request)?,
            other => return Err(ErrorData::invalid_params(format!("no tool {other}"), None)),
        })
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    runtime.block_on(async {
        let service = Modern::default().serve(rmcp::transport::stdio()).await?;
        service.waiting().await?;
        Ok(())
    })
}
