//! Tests of `jsonrpc`.

use super::*;
use serde::Deserialize;
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
#[cfg(feature = "exact-floats")]
fn a_float_written_again_is_the_float_read() {
    // Digits the fast float parsing reads one unit off: written back (as the shortest digits
    // that read as the same double), they must read as that double again.
    for digits in [
        "1.1844674407370955e20",
        "118446744073709551615",
        "0.30000000000000004",
    ] {
        let text = format!(r#"{{"jsonrpc":"2.0","method":"n","params":{{"p":{digits}}}}}"#);
        let message = one(&text);
        let again = one(&message.encode());
        assert_eq!(again, message, "{digits}");
        let read = message.to_value()["params"]["p"].as_f64();
        assert_eq!(read, digits.parse::<f64>().ok(), "{digits}");
    }
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
        Payload::Batch(items, invalid, dropped) => {
            assert_eq!(items.len(), 2);
            assert!(invalid.is_empty());
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

#[test]
fn requests_with_ids_of_forbidden_types_are_invalid_requests_owed_a_reply() {
    for (id, id_type) in [
        ("1.5", "a number that is not an integer"),
        ("1e3", "a number that is not an integer"),
        (r#"{"n":1}"#, "an object"),
        ("[1]", "an array"),
        ("true", "a boolean"),
        ("null", "null"),
    ] {
        let text = format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"roots/list","params":{{}}}}"#);
        let error = Payload::decode(&text).unwrap_err();
        let invalid = error.invalid_request().expect(&text);
        assert_eq!(
            (invalid.method(), invalid.id_type()),
            (Some("roots/list"), Some(id_type))
        );
        assert_eq!((invalid.id(), invalid.method_type()), (None, None));
        assert_eq!(
            Message::from(invalid.reply()).encode(),
            format!(
                r#"{{"jsonrpc":"2.0","id":null,"error":{{"code":-32600,"message":"Invalid Request","data":"a request id must be a string or an integer, not {id_type}"}}}}"#
            )
        );
        assert!(error.to_string().contains(id_type), "{error}");
    }
}

#[test]
fn responses_and_notifications_are_not_invalid_requests() {
    // A response with an id of a forbidden type answers nothing: an ordinary error.
    for text in [
        r#"{"jsonrpc":"2.0","id":1.5,"result":{}}"#,
        r#"{"jsonrpc":"2.0","id":true,"error":{"code":1,"message":"x"}}"#,
        r#"{"jsonrpc":"2.0","id":[1],"result":{}}"#,
    ] {
        let error = Payload::decode(text).unwrap_err();
        assert!(error.invalid_request().is_none(), "{text}");
    }
    // An error response about what could not be read still carries a null id.
    let m = one(r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"x"}}"#);
    assert!(matches!(m, Message::Response(Response { id: None, .. })));
    // A response written with `"method": null` is a response, a result or an error.
    let m = one(r#"{"jsonrpc":"2.0","id":"a","method":null,"error":{"code":1,"message":"x"}}"#);
    assert!(
        matches!(&m, Message::Response(Response { id: Some(_), result: Err(e) }) if e.code.0 == 1),
        "{m:?}"
    );
    let m = one(r#"{"jsonrpc":"2.0","id":3,"method":null,"result":{}}"#);
    assert!(
        matches!(&m, Message::Response(Response { result: Ok(_), .. })),
        "{m:?}"
    );
    // No `id` member: a notification, as before.
    let m = one(r#"{"jsonrpc":"2.0","method":"notifications/progress"}"#);
    assert!(matches!(m, Message::Notification(_)));
    // `"id": null` on what MCP names a notification: taken as one, not refused and lost.
    let m = one(r#"{"jsonrpc":"2.0","id":null,"method":"notifications/message","params":{}}"#);
    assert!(
        matches!(&m, Message::Notification(n) if n.method == "notifications/message"),
        "{m:?}"
    );
}

#[test]
fn requests_json_rpc_rejects_in_a_batch_are_kept_for_their_replies() {
    let batch = r#"[{"jsonrpc":"2.0","id":1.5,"method":"ping"},{"jsonrpc":"2.0","method":"n"},
        {"bad":true},{"jsonrpc":"2.0","id":7,"method":42},
        {"jsonrpc":"2.0","id":-18446744073709551617,"method":"ping"},42]"#;
    let Ok(Payload::Batch(messages, invalid, dropped)) = Payload::decode(batch) else {
        panic!("{:?}", Payload::decode(batch))
    };
    assert_eq!((messages.len(), dropped), (1, 2));
    let replies: Vec<String> = invalid
        .iter()
        .map(|invalid| Message::from(invalid.reply()).encode())
        .collect();
    let prefix = |id: &str| format!(r#"{{"jsonrpc":"2.0","id":{id},"error":{{"code":-32600,"#);
    assert_eq!(replies.len(), 3, "{replies:?}");
    for (reply, id) in replies.iter().zip(["null", "7", "-18446744073709551617"]) {
        assert!(reply.starts_with(&prefix(id)), "{reply}");
    }
}

#[test]
fn integer_ids_beyond_64_bits_are_refused_and_given_back_in_their_digits() {
    let huge = "1".repeat(30);
    for id in ["18446744073709551616", "-9223372036854775809", &huge] {
        let text = format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"ping"}}"#);
        let error = Payload::decode(&text).unwrap_err();
        let invalid = error.invalid_request().expect(&text);
        assert_eq!(invalid.id_type(), Some("an integer beyond 64 bits"));
        assert_eq!(invalid.id().map(ToString::to_string).as_deref(), Some(id));
        assert!(error.to_string().contains(id), "{error}");
        let reply = Message::from(invalid.reply());
        assert_eq!(
            reply.encode(),
            format!(
                r#"{{"jsonrpc":"2.0","id":{id},"error":{{"code":-32600,"message":"Invalid Request","data":"a request id that is an integer must lie within 64 bits (from -2^63 to 2^64 - 1)"}}}}"#
            )
        );
        // A `Value` has only the nearest float.
        let nearest: f64 = id.parse().unwrap();
        assert_eq!(reply.to_value()["id"], json!(nearest));
    }
    // Numbers that are not integers, however large, still get a null id.
    for id in ["1e20", "18446744073709551616.0", "-1.5E400"] {
        let text = format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"ping"}}"#);
        match Payload::decode(&text) {
            Err(error) => match error.invalid_request() {
                Some(invalid) => {
                    assert_eq!(invalid.id(), None, "{text}");
                    assert_eq!(invalid.id_type(), Some("a number that is not an integer"));
                }
                // `-1.5E400` is beyond what JSON is read as at all.
                None => assert!(error.to_string().contains("invalid JSON"), "{error}"),
            },
            Ok(payload) => panic!("{payload:?}"),
        }
    }
    // From a value, the digits are lost: a number that is not an integer.
    let value: Value =
        serde_json::from_str(r#"{"jsonrpc":"2.0","id":18446744073709551616,"method":"ping"}"#)
            .unwrap();
    let error = Message::from_value(value).unwrap_err();
    assert_eq!(error.invalid_request().and_then(InvalidRequest::id), None);
    // Such ids keep to the order of integers, below strings.
    let wide = |text: &str| RequestId::wide(text).expect(text);
    let mut ids = [
        RequestId::from("a"),
        wide("18446744073709551616"),
        wide(&huge),
        RequestId::from(u64::MAX),
        wide("-9223372036854775809"),
        wide("-99999999999999999999"),
        RequestId::from(i64::MIN),
    ];
    ids.sort();
    let order: Vec<String> = ids.iter().map(ToString::to_string).collect();
    assert_eq!(
        order,
        [
            "-99999999999999999999",
            "-9223372036854775809",
            "-9223372036854775808",
            "18446744073709551615",
            "18446744073709551616",
            &huge,
            "\"a\"",
        ]
    );
    // Only integers beyond 64 bits make such an id.
    for text in [
        "1",
        "18446744073709551615",
        "-9223372036854775808",
        "01",
        "1.0",
        "-",
        "",
    ] {
        assert_eq!(RequestId::wide(text), None, "{text}");
    }
}

#[test]
fn requests_whose_method_is_not_a_string_are_invalid_requests_answered_with_their_id() {
    for (id, method, method_type) in [
        ("7", "42", "a number"),
        (r#""s-1""#, "null", "null"),
        ("8", r#"{"name":"ping"}"#, "an object"),
        ("9", r#"["ping"]"#, "an array"),
        ("-1", "false", "a boolean"),
        ("18446744073709551615", "1.5", "a number"),
    ] {
        let text = format!(r#"{{"jsonrpc":"2.0","id":{id},"method":{method},"params":{{}}}}"#);
        let error = Payload::decode(&text).unwrap_err();
        let invalid = error.invalid_request().expect(&text);
        let own_id: Value = serde_json::from_str(id).unwrap();
        assert_eq!(invalid.id().map(RequestId::to_value), Some(own_id));
        assert_eq!(
            (invalid.method(), invalid.method_type(), invalid.id_type()),
            (None, Some(method_type), None)
        );
        assert_eq!(
            Message::from(invalid.reply()).encode(),
            format!(
                r#"{{"jsonrpc":"2.0","id":{id},"error":{{"code":-32600,"message":"Invalid Request","data":"a request method must be a string, not {method_type}"}}}}"#
            )
        );
        assert!(error.to_string().contains(method_type), "{error}");
    }
    // Its id cannot be given back either: a null id, and both faults in `data`.
    let error = Payload::decode(r#"{"jsonrpc":"2.0","id":true,"method":5}"#).unwrap_err();
    let invalid = error.invalid_request().expect("an invalid request");
    let reply = Message::from(invalid.reply()).to_value();
    assert_eq!(reply["id"], Value::Null);
    assert_eq!(
        reply["error"]["data"],
        "a request id must be a string or an integer, not a boolean; \
         a request method must be a string, not a number"
    );
    // Not requests, so owed nothing: a notification (no id), and responses.
    for text in [
        r#"{"jsonrpc":"2.0","method":5}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":[],"result":{}}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":5,"error":{"code":1,"message":"x"}}"#,
    ] {
        let error = Payload::decode(text).unwrap_err();
        assert!(error.invalid_request().is_none(), "{text}");
    }
}

#[test]
fn integer_ids_beyond_i64_are_ids_like_any_other() {
    let m = one(r#"{"jsonrpc":"2.0","id":18446744073709551615,"method":"ping"}"#);
    let Message::Request(request) = &m else {
        panic!("{m:?}")
    };
    assert_eq!(request.id.to_value(), json!(u64::MAX));
    assert_eq!(request.id.to_string(), "18446744073709551615");
    assert_eq!(
        Message::from(Response::ok(request.id.clone(), json!({}))).encode(),
        r#"{"jsonrpc":"2.0","id":18446744073709551615,"result":{}}"#
    );
    // A response with such an id reads too (and matches none of this client's requests).
    let m = one(r#"{"jsonrpc":"2.0","id":9223372036854775808,"result":{}}"#);
    assert!(
        matches!(&m, Message::Response(Response { id: Some(id), .. }) if id.to_value() == json!(1_u64 << 63)),
        "{m:?}"
    );
    // Each id has one form: an integer that fits an `i64` is one however it was made.
    assert_eq!(RequestId::from(7_u64), RequestId::from(7_i64));
    assert_eq!(RequestId::from(7_u64).as_i64(), Some(7));
    let big = RequestId::from(u64::MAX);
    assert_eq!(
        (big.as_i64(), big.as_u64(), big.as_str()),
        (None, Some(u64::MAX), None)
    );
    assert_eq!(
        serde_json::from_value::<RequestId>(json!(u64::MAX)).unwrap(),
        big
    );
    assert_eq!(
        serde_json::from_value::<RequestId>(json!(7)).unwrap(),
        RequestId::from(7)
    );
    assert_eq!(RequestId::from(-1).as_u64(), None);
    // Integers stay in order, below strings.
    let mut ids = [
        RequestId::from("a"),
        big.clone(),
        RequestId::from(-1),
        RequestId::from(1),
    ];
    ids.sort();
    assert_eq!(
        ids,
        [
            RequestId::from(-1),
            RequestId::from(1),
            big,
            RequestId::from("a")
        ]
    );
}
