//! Generated files kept current, the way rust-analyzer's sourcegen tests do it: each test
//! regenerates its file from `proto`, writes it if it changed, and then fails, saying so.
//! Run `cargo test -p coord-proto --test sourcegen` and commit what it rewrote.
//!
//! * `proto/src/openrpc/methods.rs`: the method table, read from `proto/src/api/*.rs`.
//! * `docs/openrpc.json`: the OpenRPC document (`coord_proto::openrpc::document`).
//! * `docs/protocol.md`: the method and error tables, between their markers.

use std::path::{Path, PathBuf};

use coord_proto::openrpc;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_path_buf()
}

/// Write `text` to `path` if it differs, and fail when it did.
fn ensure_file_contents(path: &Path, text: &str) {
    let old = std::fs::read_to_string(path).unwrap_or_default();
    if normalize(&old) == normalize(text) {
        return;
    }
    std::fs::write(path, text).unwrap_or_else(|e| panic!("writing {}: {e}", path.display()));
    panic!(
        "{} was not up to date and has been updated; rerun `cargo test -p coord-proto --test sourcegen` until it passes and commit the result",
        path.strip_prefix(root()).unwrap_or(path).display()
    );
}

fn normalize(s: &str) -> String {
    s.replace("\r\n", "\n")
}

#[test]
fn method_table_is_current() {
    let dir = root().join("proto/src/api");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().path()).collect();
    files.sort();
    let mut methods = Vec::new();
    for f in files.iter().filter(|f| f.file_name().unwrap() != "mod.rs") {
        methods.extend(parse_api(&std::fs::read_to_string(f).unwrap()));
    }
    assert!(methods.len() > 50, "found only {} methods in {}", methods.len(), dir.display());
    let mut out = String::from(
        "//! GENERATED from `proto/src/api/*.rs` by `cargo test -p coord-proto --test sourcegen`: do not\n\
         //! edit. Every method of the protocol with its doc, params, result and subscription.\n\n\
         use super::{Method, Subscription, schema};\n\
         use crate::types::*;\n\n\
         pub(super) const METHODS: &[Method] = &[\n",
    );
    for m in &methods {
        let params = m.params.as_ref().map_or("None".to_string(), |p| format!("Some(schema::<{p}>)"));
        let sub = m.subscription.as_ref().map_or("None".to_string(), |(n, u)| {
            format!("Some(Subscription {{ notification: {n:?}, unsubscribe: {u:?} }})")
        });
        out += &format!(
            "    Method {{\n        name: {:?},\n        doc: {:?},\n        params: {params},\n        result: schema::<{}>,\n        subscription: {sub},\n    }},\n",
            m.name, m.doc, m.result
        );
    }
    out += "];\n";
    ensure_file_contents(&root().join("proto/src/openrpc/methods.rs"), &out);
}

struct Parsed {
    name: String,
    doc: String,
    params: Option<String>,
    result: String,
    subscription: Option<(String, String)>,
}

/// The methods of one `#[rpc]` trait, read from its source: the doc comment, the
/// `#[method]` or `#[subscription]` attribute, and the signature that follows.
fn parse_api(src: &str) -> Vec<Parsed> {
    let mut out = Vec::new();
    let mut doc: Vec<String> = Vec::new();
    let mut lines = src.lines().map(str::trim).peekable();
    while let Some(line) = lines.next() {
        if let Some(d) = line.strip_prefix("///") {
            doc.push(d.trim().to_string());
            continue;
        }
        let attr = if line.starts_with("#[method(") || line.starts_with("#[subscription(") {
            let mut attr = line.to_string();
            while !attr.ends_with(")]") {
                attr.push(' ');
                attr.push_str(lines.next().expect("attribute ends"));
            }
            attr
        } else {
            if !line.starts_with("#[") {
                doc.clear();
            }
            continue;
        };
        let mut sig = String::new();
        while !sig.ends_with(';') {
            sig.push_str(lines.next().expect("signature follows its attribute"));
        }
        let quoted: Vec<&str> = attr.split('"').skip(1).step_by(2).collect();
        let params = sig.split_once("&self,").map(|(_, rest)| {
            let p = rest.split_once(':').expect("param: Type").1;
            p[..p.find(')').unwrap()].trim().trim_end_matches(',').to_string()
        });
        let (result, subscription) = if attr.starts_with("#[subscription(") {
            let item = attr.split("item = ").nth(1).expect("subscription item");
            let item = item.split([',', ')']).next().unwrap().trim().to_string();
            (item, Some((quoted[1].to_string(), quoted[2].to_string())))
        } else {
            let r = sig.split("RpcResult<").nth(1).expect("-> RpcResult<T>");
            (r[..r.rfind('>').unwrap()].to_string(), None)
        };
        out.push(Parsed { name: quoted[0].to_string(), doc: doc.join("\n"), params, result, subscription });
        doc.clear();
    }
    out
}

#[test]
fn openrpc_json_is_current() {
    let mut text = serde_json::to_string_pretty(&openrpc::document()).unwrap();
    text.push('\n');
    ensure_file_contents(&root().join("docs/openrpc.json"), &text);
}

#[test]
fn protocol_md_tables_are_current() {
    let path = root().join("docs/protocol.md");
    let mut text = std::fs::read_to_string(&path).unwrap();
    let doc = openrpc::document();
    text = replace_between(&text, "methods", &method_table(&doc));
    text = replace_between(&text, "errors", &error_table());
    text = replace_between(&text, "contents", &contents(&text));
    ensure_file_contents(&path, &text);
}

/// Replace what lies between `<!-- generated:NAME -->` and `<!-- end:NAME -->`.
fn replace_between(text: &str, name: &str, table: &str) -> String {
    let (start, end) = (format!("<!-- generated:{name} -->\n"), format!("<!-- end:{name} -->"));
    let a = text.find(&start).unwrap_or_else(|| panic!("docs/protocol.md lacks the marker {start}"));
    let b = text.find(&end).unwrap_or_else(|| panic!("docs/protocol.md lacks the marker {end}"));
    format!("{}{table}{}", &text[..a + start.len()], &text[b..])
}

/// The contents list: every chapter (`## `) and section (`### `) with its GitHub anchor.
fn contents(text: &str) -> String {
    let mut out = String::new();
    let mut fenced = false;
    for line in text.lines() {
        fenced ^= line.starts_with("```");
        let (indent, title) = match (line.strip_prefix("## "), line.strip_prefix("### ")) {
            _ if fenced => continue,
            (Some(t), _) if t.starts_with(|c: char| c.is_ascii_digit()) => ("", t),
            (_, Some(t)) => ("   ", t),
            _ => continue,
        };
        out += &format!("{indent}* [{}]({})\n", title.replace('`', ""), anchor(title));
    }
    out
}

/// GitHub's anchor for a heading: lower case, spaces to hyphens, other punctuation dropped.
fn anchor(title: &str) -> String {
    let slug: String = title
        .to_lowercase()
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
            _ => None,
        })
        .collect();
    format!("#{slug}")
}

/// Markdown cell text: one line, pipes escaped.
fn cell(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ").replace('|', "\\|")
}

/// The type a schema names (`#/components/schemas/X` → `X`), or its JSON type.
fn type_name(schema: &serde_json::Value) -> String {
    match schema.get("$ref").and_then(|r| r.as_str()) {
        Some(r) => format!("`{}`", r.rsplit('/').next().unwrap()),
        None => match schema.get("type") {
            Some(t) => format!("`{}`", t.as_str().unwrap_or("value")),
            None => "any JSON".to_string(),
        },
    }
}

fn method_table(doc: &serde_json::Value) -> String {
    let mut out = String::from(
        "| Method | What it does, who may call it, the events it appends | Params | Result |\n|---|---|---|---|\n",
    );
    for m in doc["methods"].as_array().unwrap() {
        let params = m.get("x-params-schema").map_or_else(
            || if m["paramStructure"] == "by-position" { "subscription id".to_string() } else { "none".to_string() },
            type_name,
        );
        let result = match m.get("x-notification") {
            Some(n) => format!(
                "subscription id, then `{}` notifications of {}",
                n["method"].as_str().unwrap(),
                type_name(&n["params"]["result"])
            ),
            None => type_name(&m["result"]["schema"]),
        };
        let what = m.get("description").or(m.get("summary")).and_then(|d| d.as_str()).unwrap_or("");
        out += &format!("| `{}` | {} | {params} | {result} |\n", m["name"].as_str().unwrap(), cell(what));
    }
    out
}

fn error_table() -> String {
    let mut out = String::from("| Code | `data.code` | Meaning | CLI exit code |\n|---|---|---|---|\n");
    let mut codes = coord_proto::ErrorCode::ALL.to_vec();
    codes.sort_by_key(|c| c.rpc_code());
    for c in codes {
        out += &format!("| {} | `{}` | {} | {} |\n", c.rpc_code(), c.as_str(), cell(&c.meaning()), c.exit().code());
    }
    out
}
