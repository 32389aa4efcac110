//! Tests of the event-stream reader: line endings, fields, limits and broken input.
use super::*;
use std::io::{BufReader, Read};

fn events(input: &str) -> Vec<Event> {
    SseReader::new(input.as_bytes())
        .map(|e| e.unwrap())
        .collect()
}

fn data(input: &str) -> Vec<String> {
    events(input).into_iter().map(|e| e.data).collect()
}

/// Feeds the input one byte per read, so every line ending is split across reads.
fn bytewise(input: &'static str) -> SseReader<BufReader<&'static [u8]>> {
    SseReader::new(BufReader::with_capacity(1, input.as_bytes()))
}

#[test]
fn every_line_ending_gives_the_same_events() {
    let lf = "data: a\ndata: b\n\nid: 1\ndata: c\n\n";
    let crlf = "data: a\r\ndata: b\r\n\r\nid: 1\r\ndata: c\r\n\r\n";
    let cr = "data: a\rdata: b\r\rid: 1\rdata: c\r\r";
    let mixed = "data: a\rdata: b\r\n\nid: 1\r\ndata: c\n\r";
    for input in [lf, crlf, cr, mixed] {
        assert_eq!(data(input), ["a\nb", "c"], "{input:?}");
    }
    let split: Vec<String> = bytewise("data: a\r\ndata: b\r\n\r\ndata: c\r\r")
        .map(|e| e.unwrap().data)
        .collect();
    assert_eq!(split, ["a\nb", "c"]);
}

#[test]
fn a_trailing_cr_dispatches_without_reading_further() {
    struct ThenPanic(Option<&'static [u8]>);
    impl Read for ThenPanic {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            let chunk = self.0.take().expect("read past the dispatched event");
            buf[..chunk.len()].copy_from_slice(chunk);
            Ok(chunk.len())
        }
    }
    let mut reader = SseReader::new(BufReader::new(ThenPanic(Some(b"data: a\r\r"))));
    assert_eq!(reader.next().unwrap().unwrap().data, "a");
}

#[test]
fn fields_follow_the_standard() {
    let got = events("event: ping\ndata:x\ndata\ndata:  two spaces\nunknown: 1\n\n");
    assert_eq!(got.len(), 1);
    assert_eq!(got[0].event.as_deref(), Some("ping"));
    assert!(!got[0].is_message());
    assert_eq!(got[0].data, "x\n\n two spaces");
    let got = events("event:\ndata: m\n\n");
    assert!(got[0].is_message());
    assert_eq!(got[0].event, None);
}

#[test]
fn comments_and_empty_events_are_skipped() {
    assert_eq!(data(":hello\n\n\n\n: keep-alive\ndata: a\n\n:\n\n"), ["a"]);
    assert!(events("\n\n\n").is_empty());
    assert!(events(": only comments\n\n").is_empty());
}

#[test]
fn priming_events_report_id_and_retry() {
    let mut reader = SseReader::new("id: e-1\nretry: 500\ndata:\n\n".as_bytes());
    let event = reader.next().unwrap().unwrap();
    assert_eq!(event.data, "");
    assert_eq!(event.id.as_deref(), Some("e-1"));
    assert_eq!(event.retry, Some(Duration::from_millis(500)));
    assert_eq!(reader.last_event_id(), Some("e-1"));
    let id_only = events("id: 2\n\n");
    assert_eq!(id_only[0].id.as_deref(), Some("2"));
}

#[test]
fn ids_persist_reset_and_ignore_nul() {
    let mut reader = SseReader::new(
        "id: 1\ndata: a\n\ndata: b\n\nid: x\0y\ndata: c\n\nid\ndata: d\n\n".as_bytes(),
    );
    reader.next();
    assert_eq!(reader.last_event_id(), Some("1"));
    let b = reader.next().unwrap().unwrap();
    assert_eq!(b.id, None);
    assert_eq!(reader.last_event_id(), Some("1"));
    let c = reader.next().unwrap().unwrap();
    assert_eq!(c.id, None, "an id with NUL is ignored");
    assert_eq!(reader.last_event_id(), Some("1"));
    let d = reader.next().unwrap().unwrap();
    assert_eq!(d.id.as_deref(), Some(""));
    assert_eq!(reader.last_event_id(), None, "an empty id resets it");
}

#[test]
fn retry_must_be_all_digits() {
    for bad in [
        "retry: 1.5",
        "retry: -1",
        "retry: 10ms",
        "retry:",
        "retry: 99999999999999999999999",
    ] {
        let got = events(&format!("{bad}\ndata: a\n\n"));
        assert_eq!(got[0].retry, None, "{bad}");
    }
    assert_eq!(events("retry:0\n\n")[0].retry, Some(Duration::ZERO));
}

#[test]
fn only_a_leading_bom_is_stripped() {
    assert_eq!(data("\u{feff}data: a\n\n"), ["a"]);
    // Mid-stream the BOM is part of the field name, which makes the field unknown.
    assert_eq!(
        data("data: a\n\n\u{feff}data: b\n\ndata: c\n\n"),
        ["a", "c"]
    );
    let split: Vec<String> = bytewise("\u{feff}data: a\n\n")
        .map(|e| e.unwrap().data)
        .collect();
    assert_eq!(split, ["a"]);
}

#[test]
fn end_of_stream_keeps_complete_lines_and_drops_cut_ones() {
    assert_eq!(data("data: a\n\ndata: b\n"), ["a", "b"]);
    assert_eq!(data("data: a\n\ndata: {\"cut"), ["a"]);
    assert_eq!(data("data: a\n\ndata: b\ndata: c"), ["a"]);
    assert!(events("").is_empty());
}

#[test]
fn an_oversized_line_is_reported_then_skipped() {
    let big = "x".repeat(100);
    let input = format!("data: small\n\ndata: {big}\ndata: more\n\ndata: after\n\n");
    let mut reader = SseReader::with_max_event_size(input.as_bytes(), 64);
    assert_eq!(reader.next().unwrap().unwrap().data, "small");
    match reader.next() {
        Some(Err(SseError::EventTooLarge { limit: 64 })) => {}
        other => panic!("{other:?}"),
    }
    assert_eq!(reader.next().unwrap().unwrap().data, "after");
    assert!(reader.next().is_none());
}

#[test]
fn many_small_lines_count_toward_the_limit() {
    let lines = "data: 0123456789\n".repeat(10);
    let input = format!("{lines}\ndata: next\n\n");
    let mut reader =
        SseReader::with_max_event_size(BufReader::with_capacity(7, input.as_bytes()), 100);
    assert!(matches!(
        reader.next(),
        Some(Err(SseError::EventTooLarge { .. }))
    ));
    assert_eq!(reader.next().unwrap().unwrap().data, "next");
}

#[test]
fn comments_do_not_accumulate_toward_the_limit() {
    let input = format!("{}data: ok\n\n", ": keep-alive\n".repeat(100));
    let got: Vec<_> = SseReader::with_max_event_size(input.as_bytes(), 32).collect();
    assert_eq!(got.len(), 1);
    assert_eq!(got[0].as_ref().unwrap().data, "ok");
}

#[test]
fn a_stream_without_newlines_is_bounded() {
    let endless = BufReader::with_capacity(512, io::repeat(b'a'));
    let mut reader = SseReader::with_max_event_size(endless, 4096);
    assert!(matches!(
        reader.next(),
        Some(Err(SseError::EventTooLarge { limit: 4096 }))
    ));
    assert!(
        reader.line.capacity() <= 8192,
        "buffered {} bytes",
        reader.line.capacity()
    );
}

#[test]
fn an_oversized_event_at_the_end_yields_nothing_more() {
    let input = format!("data: {}", "y".repeat(200));
    let mut reader = SseReader::with_max_event_size(input.as_bytes(), 50);
    assert!(matches!(
        reader.next(),
        Some(Err(SseError::EventTooLarge { .. }))
    ));
    assert!(reader.next().is_none());
}

#[test]
fn an_io_error_ends_the_stream() {
    struct Broken;
    impl Read for Broken {
        fn read(&mut self, _: &mut [u8]) -> io::Result<usize> {
            Err(io::Error::new(io::ErrorKind::ConnectionReset, "reset"))
        }
    }
    let mut reader = SseReader::new(BufReader::new("data: a\n\n".as_bytes().chain(Broken)));
    assert_eq!(reader.next().unwrap().unwrap().data, "a");
    match reader.next() {
        Some(Err(SseError::Io(e))) => assert_eq!(e.kind(), io::ErrorKind::ConnectionReset),
        other => panic!("{other:?}"),
    }
    assert!(reader.next().is_none());
}

#[test]
fn invalid_utf8_is_replaced_not_fatal() {
    let input: &[u8] = b"data: a\xffb\n\n";
    let got: Vec<_> = SseReader::new(input).map(|e| e.unwrap().data).collect();
    assert_eq!(got, ["a\u{fffd}b"]);
}

#[test]
fn the_largest_limit_means_no_limit() {
    let big = "z".repeat(100_000);
    let input = format!("data: {big}\ndata: {big}\n\n");
    let got: Vec<_> = SseReader::with_max_event_size(input.as_bytes(), usize::MAX)
        .map(|e| e.unwrap().data)
        .collect();
    assert_eq!(got, [format!("{big}\n{big}")]);
}
