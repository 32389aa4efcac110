//! The SSE decoder against a plain reading of the event-stream rules, under any chunking.

use std::time::Duration;

use umcp::transport::sse::{Event, SseError, SseReader};

use super::engine::{chunked_reader, Rng, Target};

const DICTIONARY: &[&[u8]] = &[
    b"data:",
    b"data: ",
    b"id:",
    b"id: ",
    b"event:",
    b"event: message",
    b"retry:",
    b"retry: 1000",
    b":",
    b": ping",
    b"\n",
    b"\r\n",
    b"\r",
    b"\n\n",
    b"\r\n\r\n",
    b"\r\r",
    b"\xef\xbb\xbf",
    b"\0",
    b"data: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n\n",
    b"99999999999999999999999",
    b"retry: 99999999999999999999999\n",
];

#[test]
fn sse_stream_decodes_the_same_whatever_its_chunking() {
    Target {
        name: "sse",
        dictionary: DICTIONARY,
        default_cases: 3000,
    }
    .run(check);
}

#[test]
fn invalid_utf8_never_takes_an_event_past_its_limit() {
    // Each invalid byte decodes to a three-byte U+FFFD: the 36 bytes of this line would
    // become 96 bytes of event.
    let mut input = b"data: ".to_vec();
    input.extend(std::iter::repeat_n(0xff, 30));
    input.extend(b"\n\ndata: ok\n\n");
    let got: Vec<Result<String, SseError>> = SseReader::with_max_event_size(&input[..], 40)
        .map(|e| e.map(|e| e.data))
        .collect();
    assert!(
        matches!(got[..], [Err(SseError::EventTooLarge { limit: 40 }), Ok(ref ok)] if ok == "ok"),
        "{got:?}"
    );
}

#[test]
fn an_overflowing_retry_is_ignored_like_any_bad_retry() {
    let got: Vec<Event> = SseReader::new(&b"retry: 99999999999999999999999\n\nretry: x\n\n"[..])
        .map(|e| e.expect("no error"))
        .collect();
    assert_eq!(got, []);
}

fn check(input: &[u8], rng: &mut Rng) {
    let (expected, expected_id) = reference(input);

    // Within the default limit: exactly the reference's events, however the bytes arrive.
    let mut reader = SseReader::new(chunked_reader(input, rng));
    let got: Vec<Event> = reader
        .by_ref()
        .map(|e| e.unwrap_or_else(|e| panic!("unexpected error: {e}")))
        .collect();
    assert_eq!(got, expected, "events differ from the reference");
    assert_eq!(reader.last_event_id(), expected_id.as_deref());
    assert!(reader.next().is_none(), "events after the end");

    // With a small limit: the same outcome for two chunkings, every event within the limit,
    // and when nothing was too large, the reference's events.
    let limit = 1 + rng.small(input.len() + 16);
    let decode = |rng: &mut Rng| -> Vec<Result<Event, usize>> {
        SseReader::with_max_event_size(chunked_reader(input, rng), limit)
            .map(|e| match e {
                Ok(event) => Ok(event),
                Err(SseError::EventTooLarge { limit }) => Err(limit),
                Err(e) => panic!("unexpected error: {e}"),
            })
            .collect()
    };
    let first = decode(rng);
    let second = decode(rng);
    assert_eq!(first, second, "limit {limit}: chunking changed the outcome");
    for event in first.iter().flatten() {
        let size = event.data.len()
            + event.id.as_ref().map_or(0, String::len)
            + event.event.as_ref().map_or(0, String::len);
        assert!(
            size <= limit,
            "an event of {size} bytes passed the limit of {limit}"
        );
    }
    // Recovery: an oversized event in front is reported and skipped, and changes nothing
    // after it (unless the input starts with a byte-order mark, which only counts first).
    if !input.starts_with(b"\xef\xbb\xbf") {
        let mut joined = b"data: ".to_vec();
        joined.extend(std::iter::repeat_n(b'x', limit));
        joined.extend(b"\n\n");
        joined.extend(input);
        let after: Vec<Result<Event, usize>> =
            SseReader::with_max_event_size(chunked_reader(&joined, rng), limit)
                .map(|e| e.map_err(|_| limit))
                .collect();
        assert_eq!(
            after.first(),
            Some(&Err(limit)),
            "limit {limit}: no error first"
        );
        assert_eq!(
            after[1..],
            first[..],
            "limit {limit}: the oversized event left a trace"
        );
    }
    if first.iter().all(Result::is_ok) {
        let events: Vec<Event> = first.into_iter().flatten().collect();
        assert_eq!(
            events, expected,
            "limit {limit}: events differ from the reference"
        );
    }
}

/// The events of `input` and the last event id, read the plain way: the whole input at
/// once, split into lines first. It follows the module's documented rules: one leading BOM,
/// `\r\n`, `\n` or `\r` line endings, a final event without its blank line delivered, a cut
/// final line dropped with its event.
fn reference(input: &[u8]) -> (Vec<Event>, Option<String>) {
    let input = input.strip_prefix(b"\xef\xbb\xbf").unwrap_or(input);
    let mut lines: Vec<&[u8]> = Vec::new();
    let mut start = 0;
    let mut i = 0;
    while i < input.len() {
        match input[i] {
            b'\n' => {
                lines.push(&input[start..i]);
                start = i + 1;
            }
            b'\r' => {
                lines.push(&input[start..i]);
                if input.get(i + 1) == Some(&b'\n') {
                    i += 1;
                }
                start = i + 1;
            }
            _ => {}
        }
        i += 1;
    }
    let truncated = start < input.len();

    let mut events = Vec::new();
    let mut last_id = None;
    let mut pending = Event::default();
    let mut used = false;
    let dispatch = |pending: &mut Event, used: &mut bool, events: &mut Vec<Event>| {
        let mut event = std::mem::take(pending);
        if event.data.ends_with('\n') {
            event.data.pop();
        }
        if std::mem::replace(used, false) {
            events.push(event);
        }
    };
    for line in lines {
        if line.is_empty() {
            dispatch(&mut pending, &mut used, &mut events);
            continue;
        }
        if line[0] == b':' {
            continue;
        }
        let line = String::from_utf8_lossy(line);
        let (field, value) = match line.split_once(':') {
            Some((field, value)) => (field, value.strip_prefix(' ').unwrap_or(value)),
            None => (&line[..], ""),
        };
        match field {
            "event" => pending.event = Some(value.to_owned()).filter(|v| !v.is_empty()),
            "data" => {
                pending.data.push_str(value);
                pending.data.push('\n');
            }
            "id" if !value.contains('\0') => {
                pending.id = Some(value.to_owned());
                last_id = Some(value.to_owned()).filter(|v| !v.is_empty());
            }
            "retry" if !value.is_empty() && value.bytes().all(|b| b.is_ascii_digit()) => {
                match value.parse::<u64>() {
                    Ok(ms) => pending.retry = Some(Duration::from_millis(ms)),
                    Err(_) => continue,
                }
            }
            _ => continue,
        }
        used = true;
    }
    if !truncated {
        dispatch(&mut pending, &mut used, &mut events);
    }
    (events, last_id)
}
