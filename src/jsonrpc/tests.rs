//! Tests of `jsonrpc`.

use super::*;
use serde_json::json;

fn one(text: &str) -> Message {
    match Payload::decode(text).unwrap() {
        Payload::Single(m) => m,
        other => panic!("not single: {other:?}"),
    }
}

#[test]
fn encodes_compact_lines() {
    let n = Message::from(Notification::new("notifications/initialized", None));
    assert_eq!(
        n.encode(),
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#
    );
    let r = Message::from(Response::ok(7.into(), json!({})));
    assert_eq!(r.encode(), r#"{"jsonrpc":"2.0","id":7,"result":{}}"#);
    let e = Message::from(Response::err(
        "a".into(),
        ErrorObject::new(ErrorCode::METHOD_NOT_FOUND, "nope"),
    ));
    assert_eq!(
        e.encode(),
        r#"{"jsonrpc":"2.0","id":"a","error":{"code":-32601,"message":"nope"}}"#
    );
    let with_newline = Request::new(1, "echo", Some(json!({"m": "a\nb"})));
    assert!(!Message::from(with_newline).encode().contains('\n'));
}

#[test]
fn decodes_each_kind_and_ignores_unknown_members() {
    let m = one(r#"{"jsonrpc":"2.0","id":"x","method":"ping","extra":1}"#);
    assert_eq!(m, Message::Request(Request::new("x", "ping", None)));
    let m = one(r#"{"jsonrpc":"2.0","method":"n","params":null}"#);
    assert_eq!(m, Message::Notification(Notification::new("n", None)));
    let m = one(r#"{"jsonrpc":"2.0","id":3,"result":{"a":1}}"#);
    assert_eq!(m, Message::Response(Response::ok(3.into(), json!({"a":1}))));
    let m = one(r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"bad"}}"#);
    match m {
        Message::Response(Response {
            id: None,
            result: Err(e),
        }) => {
            assert_eq!(e.code, ErrorCode::PARSE_ERROR)
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn rejects_what_is_not_a_message() {
    for bad in [
        "",
        "nonsense",
        "42",
        r#"{"jsonrpc":"2.0"}"#,
        r#"{"id":1.5,"result":1}"#,
        "[]",
    ] {
        assert!(Payload::decode(bad).is_err(), "{bad}");
    }
    assert!(Payload::decode(r#"{"result":1}"#).is_err());
}

#[test]
fn decodes_batches_dropping_bad_elements() {
    let text =
        r#"[{"jsonrpc":"2.0","id":1,"result":1},{"bad":true},{"jsonrpc":"2.0","method":"n"}]"#;
    match Payload::decode(text).unwrap() {
        Payload::Batch(items, dropped) => {
            assert_eq!(items.len(), 2);
            assert_eq!(dropped, 1);
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn request_id_display_quotes_strings() {
    assert_eq!(RequestId::from(92).to_string(), "92");
    assert_eq!(RequestId::from("92").to_string(), "\"92\"");
    assert_ne!(RequestId::from(92), RequestId::from("92"));
}

#[test]
fn a_value_decodes_by_way_of_its_text_as_it_would_directly() {
    #[derive(Debug, PartialEq, Deserialize)]
    struct Params {
        big: u64,
        ratio: f64,
        text: String,
        rest: Option<Value>,
    }
    let value = json!({"big": u64::MAX, "ratio": 0.1, "text": "é\n\"", "rest": {"a": [1, null]}});
    let via_text: Params = decode_value(&value).unwrap();
    assert_eq!(via_text, serde_json::from_value::<Params>(value).unwrap());
    assert!(decode_value::<Params>(&json!({"big": -1})).is_err());
}
