//! `resources/directory/read` (the Skills extension's `directoryRead`): against the TypeScript
//! SDK v2's own Skills extension (`tests/peers/ts_v2_skills_server.mjs`) in both eras, one
//! page, every page and the whole tree, a listed skill's directories answered from its entry
//! and a dynamic one's from the server, kept inside the skill; and against hand-made servers
//! in memory, what is never sent and how a hostile tree is bounded.

mod common;

use std::path::Path;
use std::sync::{Arc, Mutex};

use serde_json::{json, Value};

use common::interop::options;
use common::peers;
use umcp::jsonrpc::{ErrorCode, ErrorObject, Message, Response};
use umcp::testing::{MemoryConfig, MemoryEnd};
use umcp::types::{sha256_digest, Resource, SkillError};
use umcp::{Client, Era, Error, Options, ProtocolMode, SkillPolicy, StdioConfig, Unsupported};

const PDF: &str = "skill://pdf-processing";

fn path_arg(path: &Path) -> String {
    path.to_string_lossy().into_owned()
}

/// A client of the TypeScript skills server over stdio (the handshake era).
fn ts_stdio(dynamic: bool) -> Client {
    let mut config = StdioConfig::new("node").arg(path_arg(&peers::ts_v2_skills_server()));
    if dynamic {
        config = config.arg("dynamic");
    }
    let client = Client::connect_with_options(config, options()).expect("connect");
    assert_eq!(client.era(), Era::Legacy);
    client
}

fn uris(resources: &[Resource]) -> Vec<&str> {
    resources.iter().map(|r| r.uri.as_str()).collect()
}

/// The tree of the catalog's `pdf-processing`, as a walk gives it: each directory followed by
/// its children, in the server's order.
const PDF_TREE: [&str; 8] = [
    "skill://pdf-processing/SKILL.md",
    "skill://pdf-processing/references",
    "skill://pdf-processing/references/FORMS.md",
    "skill://pdf-processing/templates",
    "skill://pdf-processing/templates/invoice.md",
    "skill://pdf-processing/templates/purchase-order.md",
    "skill://pdf-processing/templates/regional",
    "skill://pdf-processing/templates/regional/eu-invoice.md",
];

/// One page, every page (the peer serves two entries a page) and the whole tree.
fn reads_pages_and_walks(client: &Client) {
    assert!(client.offers_directory_read());
    let page = client.read_directory(PDF, None).expect("first page");
    assert_eq!(page.resources.len(), 2, "{page:?}");
    assert!(page.next_cursor.is_some(), "{page:?}");
    let children = client.read_whole_directory(PDF).expect("every page");
    assert_eq!(
        uris(&children),
        [
            "skill://pdf-processing/SKILL.md",
            "skill://pdf-processing/references",
            "skill://pdf-processing/templates",
        ]
    );
    assert!(!children[0].is_directory() && children[1].is_directory());
    assert_eq!(children[0].size, Some(120), "{:?}", children[0]);
    let tree = client.walk_directory(PDF).expect("walk");
    assert_eq!(uris(&tree), PDF_TREE);
    // A file is not a directory: the server's own -32602.
    match client.read_directory("skill://pdf-processing/SKILL.md", None) {
        Err(Error::Rpc(error)) => assert_eq!(error.code, ErrorCode::INVALID_PARAMS, "{error}"),
        other => panic!("{other:?}"),
    }
}

#[test]
fn the_typescript_sdk_directories_read_page_by_page_and_walk_over_stdio() {
    if peers::skip_interop() {
        return;
    }
    let client = ts_stdio(false);
    reads_pages_and_walks(&client);
    client.close();
}

#[cfg(feature = "http")]
#[test]
fn the_typescript_sdk_directories_read_and_walk_in_the_stateless_era() {
    if peers::skip_interop() {
        return;
    }
    let server = peers::ts_v2_skills_http();
    let config = umcp::HttpConfig::new(server.url("/mcp"));
    let client = Client::connect_with_options(config, options()).expect("connect");
    assert_eq!(client.era(), Era::Modern);
    reads_pages_and_walks(&client);
    client.close();
}

#[test]
fn a_listed_skill_lists_its_directories_from_its_entry_as_the_server_does() {
    if peers::skip_interop() {
        return;
    }
    let client = ts_stdio(false);
    let entry = client.get_skill("skill://pdf-processing/SKILL.md").unwrap();
    let skill = client.load_skill(&entry).expect("load");
    for dir in ["", "templates", "templates/regional", "references"] {
        let from_entry = skill.list_directory(dir).expect(dir);
        let uri = match dir {
            "" => PDF.to_owned(),
            dir => format!("{PDF}/{dir}"),
        };
        let mut from_server = client.read_whole_directory(&uri).unwrap();
        from_server.sort_by(|a, b| a.uri.cmp(&b.uri));
        assert_eq!(uris(&from_entry), uris(&from_server), "{dir}");
        for (ours, theirs) in from_entry.iter().zip(&from_server) {
            assert_eq!(ours.is_directory(), theirs.is_directory(), "{}", ours.uri);
            assert_eq!(ours.name, theirs.name);
        }
    }
    let invoice = &skill.list_directory("templates").unwrap()[0];
    assert_eq!(skill.read_text(&invoice.uri).unwrap(), "# Invoice\n");
    for missing in [
        "scripts",
        "SKILL.md",
        "../git-workflow",
        "skill://git-workflow",
    ] {
        let outcome = skill.list_directory(missing);
        assert!(
            matches!(&outcome, Err(Error::Skill(e)) if matches!(**e, SkillError::Unlisted { .. })),
            "{missing}: {outcome:?}"
        );
    }
    client.close();
}

#[test]
fn a_dynamic_skill_lists_its_directories_from_the_server_and_only_inside_the_skill() {
    if peers::skip_interop() {
        return;
    }
    let client = ts_stdio(true);
    let entry = client.get_skill("skill://reports/daily/SKILL.md").unwrap();
    let policy = SkillPolicy::default().with_dynamic(true);
    let skill = client.load_skill_under(&entry, &policy).expect("load");
    let root = skill.list_directory("").unwrap();
    assert_eq!(
        uris(&root),
        [
            "skill://reports/daily/SKILL.md",
            "skill://reports/daily/data"
        ]
    );
    // The server's raw view names a file elsewhere, which the skill's listing left out.
    let raw = client
        .read_whole_directory("skill://reports/daily")
        .unwrap();
    assert!(
        uris(&raw).contains(&"skill://elsewhere/secret.md"),
        "{raw:?}"
    );
    let walked = client.walk_directory("skill://reports/daily").unwrap();
    assert_eq!(walked.len(), 4, "{walked:?}");
    let data = skill.list_directory("data").unwrap();
    assert_eq!(uris(&data), ["skill://reports/daily/data/today.csv"]);
    assert_eq!(
        skill.read_text(&data[0].uri).unwrap(),
        "region,total\neu,3\n"
    );
    let outside = skill.list_directory("skill://elsewhere");
    assert!(matches!(outside, Err(Error::Skill(_))), "{outside:?}");
    client.close();
}

// ---------------------------------------------------------------------------------------------
// Hand-made servers in memory
// ---------------------------------------------------------------------------------------------

/// A server answering `initialize` with `settings` as its Skills extension settings, and
/// every other request with `answer(method, params)`; the methods it was sent go to `seen`.
fn hand_made(
    settings: Value,
    seen: Arc<Mutex<Vec<String>>>,
    answer: impl Fn(&str, &Value) -> Result<Value, String> + Send + Sync + Clone + 'static,
) -> Client {
    let config = MemoryConfig::new("hand-made-skills", move |end: MemoryEnd| {
        let (settings, seen, answer) = (settings.clone(), Arc::clone(&seen), answer.clone());
        std::thread::spawn(move || {
            while let Some(message) = end.recv() {
                let Message::Request(request) = message else {
                    continue;
                };
                let params = request.params.clone().unwrap_or(Value::Null);
                seen.lock().unwrap().push(request.method.clone());
                let result = match request.method.as_str() {
                    "initialize" => Ok(json!({
                        "protocolVersion": "2025-11-25",
                        "capabilities": {"resources": {},
                            "extensions": {"io.modelcontextprotocol/skills": settings}},
                        "serverInfo": {"name": "hand-made", "version": "1"},
                    })),
                    method => answer(method, &params),
                };
                let response = match result {
                    Ok(result) => Response::ok(request.id, result),
                    Err(message) => Response::err(
                        request.id,
                        ErrorObject::new(ErrorCode::INVALID_PARAMS, message),
                    ),
                };
                end.send(&response.into());
            }
        });
    });
    let options = Options::default().with_protocol_mode(ProtocolMode::Legacy);
    Client::connect_with_options(config, options).expect("connect")
}

fn dir(uri: &str) -> Value {
    let name = uri.rsplit('/').next().unwrap_or_default();
    json!({"uri": uri, "name": name, "mimeType": "inode/directory"})
}

#[test]
fn nothing_is_sent_without_directory_read_nor_for_a_listed_skill() {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let body = "---\nname: pdf\ndescription: Read PDFs\n---\nBody.\n";
    let forms = "Forms.\n";
    let file = |uri: &str, text: &str| json!({"uri": uri, "digest": sha256_digest(text.as_bytes()), "size": text.len()});
    let entry = json!({
        "uri": "skill://pdf/SKILL.md",
        "frontmatter": {"name": "pdf", "description": "Read PDFs"},
        "resources": [file("skill://pdf/SKILL.md", body),
                      file("skill://pdf/references/FORMS.md", forms)],
    });
    let client = hand_made(
        json!({}),
        Arc::clone(&seen),
        move |method, params| match method {
            "skills/get" => Ok(json!({"skill": entry})),
            "resources/read" => Ok(json!({"contents": [
                {"uri": params["uri"], "text": if params["uri"] == "skill://pdf/SKILL.md" { body } else { forms }}
            ]})),
            _ => Err(format!("unexpected {method}")),
        },
    );
    assert!(client.skills_settings().is_some());
    assert!(!client.offers_directory_read());
    for outcome in [
        client.read_directory("skill://pdf", None).map(|_| ()),
        client.read_whole_directory("skill://pdf").map(|_| ()),
        client.walk_directory("skill://pdf").map(|_| ()),
    ] {
        assert!(
            matches!(&outcome, Err(Error::Unsupported(Unsupported::Capability { method, .. }))
                if method == "resources/directory/read"),
            "{outcome:?}"
        );
    }
    let entry = client.get_skill("skill://pdf/SKILL.md").unwrap();
    let skill = client.load_skill(&entry).unwrap();
    let root = skill.list_directory(".").unwrap();
    assert_eq!(
        uris(&root),
        ["skill://pdf/SKILL.md", "skill://pdf/references"]
    );
    assert_eq!(root[0].size, Some(body.len() as u64));
    assert!(root[1].is_directory());
    assert_eq!(
        uris(&skill.list_directory("references/").unwrap()),
        ["skill://pdf/references/FORMS.md"]
    );
    client.close();
    let seen = seen.lock().unwrap();
    assert!(
        !seen.iter().any(|m| m == "resources/directory/read"),
        "{seen:?}"
    );
}

#[test]
fn a_walk_takes_each_directory_once_stays_inside_and_stops_at_its_depth() {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let client = hand_made(
        json!({"directoryRead": true}),
        Arc::clone(&seen),
        |_, params| {
            let uri = params["uri"].as_str().unwrap_or_default().to_owned();
            // Every directory holds itself, a directory elsewhere, one with `..` in it, and
            // one more level down, without end.
            Ok(json!({"resources": [
                dir(&uri),
                dir("file:///etc"),
                dir(&format!("{uri}/../up")),
                dir(&format!("{uri}/d")),
            ]}))
        },
    );
    let outcome = client.walk_directory("skill://deep");
    let Err(Error::Protocol(message)) = &outcome else {
        panic!("{outcome:?}")
    };
    assert!(message.contains("32 directories deep"), "{message}");
    let reads = seen
        .lock()
        .unwrap()
        .iter()
        .filter(|m| *m == "resources/directory/read")
        .count();
    assert_eq!(reads, 32, "one read a level, none elsewhere");
    client.close();
}

#[test]
fn a_wide_tree_is_cut_off_and_a_repeated_cursor_refused() {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let client = hand_made(
        json!({"directoryRead": true}),
        Arc::clone(&seen),
        |_, params| {
            let uri = params["uri"].as_str().unwrap_or_default().to_owned();
            if uri == "skill://loop" {
                return Ok(json!({"resources": [], "nextCursor": "again"}));
            }
            // A hundred directories of 120 files each.
            let children: Vec<Value> = match uri.as_str() {
                "skill://wide" => (0..100).map(|i| dir(&format!("{uri}/{i}"))).collect(),
                _ => (0..120)
                    .map(|i| json!({"uri": format!("{uri}/{i}.md"), "name": format!("{i}.md")}))
                    .collect(),
            };
            Ok(json!({ "resources": children }))
        },
    );
    let outcome = client.walk_directory("skill://wide");
    let Err(Error::Protocol(message)) = &outcome else {
        panic!("{outcome:?}")
    };
    assert!(message.contains("more than 10000 entries"), "{message}");
    let outcome = client.read_whole_directory("skill://loop");
    let Err(Error::Protocol(message)) = &outcome else {
        panic!("{outcome:?}")
    };
    assert!(message.contains("repeated the cursor"), "{message}");
    client.close();
}
