//! The stateless (`--modern`) POST of the HTTP front end: no session; `_meta` and the routing
//! headers are checked before the request reaches the one server.

use std::io::Read;

use tiny_http::Request;
use umcp::jsonrpc::{ErrorCode, Message, Payload, Response};

use super::super::behaviours::Behaviour;
use super::super::{lock, modern};
use super::{rpc_error, status, with_headers, EventStream, Front, MAX_BODY};

impl Front {
    /// A POST of the stateless protocol: no session; `_meta` and the routing headers are
    /// checked before the request reaches the server.
    pub(super) fn post_modern(&self, mut request: Request) {
        let mut body = String::new();
        let read = request.as_reader().take(MAX_BODY).read_to_string(&mut body);
        if let Err(e) = read {
            return rpc_error(request, 400, ErrorCode::PARSE_ERROR, &e.to_string());
        }
        let call = match Payload::decode(body.trim()) {
            Ok(Payload::Single(Message::Request(call))) => call,
            Ok(Payload::Single(_)) => return status(request, 202, ""),
            _ => return rpc_error(request, 400, ErrorCode::PARSE_ERROR, "one request per POST"),
        };
        let params = call.params.clone().unwrap_or_default();
        let lookup = |name: &str| {
            request
                .headers()
                .iter()
                .find(|h| h.field.as_str().as_str().eq_ignore_ascii_case(name))
                .map(|h| h.value.as_str().to_owned())
        };
        let checked = modern::check_meta(&params)
            .and_then(|()| modern::check_headers(&call.method, &params, &lookup));
        if let Err((code, error)) = checked {
            let body = Message::from(Response {
                id: Some(call.id),
                result: Err(error),
            })
            .encode();
            let reply = tiny_http::Response::from_string(body).with_status_code(code);
            let _ = request.respond(with_headers(reply, &[("Content-Type", "application/json")]));
            return;
        }
        if self.opts.behaviour == Behaviour::LoseFirstResponse
            && call.method != "server/discover"
            && lock(&self.lost).insert(call.method.clone())
        {
            if let Ok(stream) = EventStream::open(request, &[]) {
                stream.end();
            }
            return;
        }
        let session = self.stateless.clone();
        self.answer(request, &session, call, None);
    }
}
