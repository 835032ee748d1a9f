//! One rule in Claude Code's permission syntax: `Tool` or `Tool(specifier)`.
//!
//! * The tool part is a [`Wildcard`]: `Bash`, `mcp__github__*`, `*`.
//! * `Bash(spec)`: the command, whole, as a wildcard (`git push*`); the legacy `prefix:*`
//!   means a prefix.
//! * `Read(spec)`, `Edit(spec)`, `Write(spec)`, `MultiEdit(spec)`, `NotebookEdit(spec)`: the
//!   file, as a gitignore-style glob: `//abs/path` is absolute, `~/p` is in the home
//!   directory, anything else is relative to the session's directory (a leading `/` or `./`
//!   is dropped); a pattern with no `/` matches at any depth. `Edit(...)` also covers the
//!   other editing tools (Write, MultiEdit, NotebookEdit), as in Claude Code.
//! * `WebFetch(domain:host)`: the URL's host, as a wildcard (`*.example.com`).

use std::cell::OnceCell;
use std::path::{Path, PathBuf};

use globset::{GlobBuilder, GlobMatcher};
use serde_json::Value;

use crate::PolicyError;
use crate::shell::{self, Analysis};
use crate::wildcard::Wildcard;

/// The tools that edit files, which an `Edit(...)` rule covers.
const EDIT_TOOLS: [&str; 4] = ["Edit", "Write", "MultiEdit", "NotebookEdit"];
/// The tools whose specifier is a path.
const PATH_TOOLS: [&str; 5] = ["Read", "Edit", "Write", "MultiEdit", "NotebookEdit"];

/// A parsed rule.
#[derive(Debug, Clone)]
pub struct Pattern {
    tool: Wildcard,
    tool_name: String,
    spec: Option<Spec>,
}

#[derive(Debug, Clone)]
enum Spec {
    Command(Wildcard),
    Path { glob: GlobMatcher, absolute: bool },
    Domain(Wildcard),
}

fn err(rule: &str, why: &str) -> PolicyError {
    PolicyError(format!("rule '{rule}': {why}"))
}

impl Pattern {
    pub fn parse(rule: &str) -> Result<Pattern, PolicyError> {
        let rule_t = rule.trim();
        if rule_t.is_empty() {
            return Err(PolicyError("a rule must not be empty".into()));
        }
        let (tool_name, spec) = match rule_t.find('(') {
            None => (rule_t, None),
            Some(i) => {
                let Some(inner) = rule_t[i + 1..].strip_suffix(')') else {
                    return Err(err(rule, "expected Tool(specifier) with a closing parenthesis"));
                };
                (&rule_t[..i], Some(inner))
            }
        };
        if tool_name.is_empty() || tool_name.chars().any(|c| c.is_whitespace() || "()".contains(c)) {
            return Err(err(rule, "the tool name must be one word, e.g. Bash, Write or mcp__server__*"));
        }
        let spec = match spec {
            None => None,
            Some(s) if s.trim().is_empty() || s.trim() == "*" => None,
            Some(s) => Some(Self::spec(rule, tool_name, s)?),
        };
        Ok(Pattern { tool: Wildcard::new(tool_name), tool_name: tool_name.to_string(), spec })
    }

    fn spec(rule: &str, tool: &str, s: &str) -> Result<Spec, PolicyError> {
        if tool == "Bash" {
            let s = match s.strip_suffix(":*") {
                Some(prefix) => format!("{prefix}*"),
                None => s.to_string(),
            };
            return Ok(Spec::Command(Wildcard::new(&s)));
        }
        if PATH_TOOLS.contains(&tool) {
            let (pattern, absolute) = if let Some(abs) = s.strip_prefix("//") {
                (format!("/{abs}"), true)
            } else if let Some(rest) = s.strip_prefix("~/") {
                let home = std::env::var("HOME").map_err(|_| err(rule, "~/ needs $HOME"))?;
                (format!("{}/{rest}", home.trim_end_matches('/')), true)
            } else {
                let rel = s.trim_start_matches("./").trim_start_matches('/');
                (if rel.contains('/') { rel.to_string() } else { format!("**/{rel}") }, false)
            };
            let glob = GlobBuilder::new(&pattern)
                .literal_separator(true)
                .build()
                .map_err(|e| err(rule, &format!("bad path pattern: {e}")))?
                .compile_matcher();
            return Ok(Spec::Path { glob, absolute });
        }
        if tool == "WebFetch" {
            let Some(domain) = s.strip_prefix("domain:") else {
                return Err(err(rule, "WebFetch takes domain:HOST"));
            };
            return Ok(Spec::Domain(Wildcard::new(domain)));
        }
        Err(err(
            rule,
            "a specifier is understood for Bash, Read, Edit, Write, MultiEdit, NotebookEdit and WebFetch; \
             gate other tools by name alone",
        ))
    }

    /// Does this call match? `cwd` is where relative path rules start.
    pub fn matches(&self, tool_name: &str, input: &Value, cwd: Option<&Path>) -> bool {
        self.check(&Call::new(tool_name, input, cwd)).is_some()
    }

    /// Does this call match, and why when it is not plain to see: `Some(None)` for a call
    /// that matches as written, `Some(Some(reason))` for one that matches once resolved
    /// (`bash -c 'git push'`) or that cannot be resolved (`eval "$X"`).
    pub fn check(&self, call: &Call<'_>) -> Option<Option<String>> {
        let tool_name = call.tool_name;
        let tool_ok = self.tool.matches(tool_name) || (self.tool_name == "Edit" && EDIT_TOOLS.contains(&tool_name));
        if !tool_ok {
            return None;
        }
        let field = |names: &[&str]| names.iter().find_map(|n| call.input.get(*n).and_then(Value::as_str));
        let plain = |yes: bool| yes.then_some(None);
        match &self.spec {
            None => Some(None),
            Some(Spec::Command(w)) => {
                let line = field(&["command"])?;
                if w.matches(line.trim()) {
                    return Some(None);
                }
                command_match(w, call.shell(line))
            }
            Some(Spec::Domain(w)) => plain(field(&["url"]).and_then(host).is_some_and(|h| w.matches(&h))),
            Some(Spec::Path { glob, absolute }) => {
                let file = Path::new(field(&["file_path", "notebook_path", "path"])?);
                let full: PathBuf = match (file.is_absolute(), call.cwd) {
                    (true, _) => file.to_path_buf(),
                    (false, Some(c)) => c.join(file),
                    (false, None) => file.to_path_buf(),
                };
                if *absolute {
                    return plain(glob.is_match(&full));
                }
                plain(match call.cwd {
                    Some(c) => full.strip_prefix(c).is_ok_and(|rel| glob.is_match(rel)),
                    None => !file.is_absolute() && glob.is_match(file),
                })
            }
        }
    }
}

/// A command rule against what the line runs: any command it runs, in any spelling
/// (see `shell`), or any command it may run that the rule could match.
fn command_match(w: &Wildcard, a: &Analysis) -> Option<Option<String>> {
    if let Some(s) = a.seen.iter().find(|s| w.matches(&s.command)) {
        return Some(s.written.as_ref().map(|written| format!("{} runs `{}`", shell::quote(written), s.command)));
    }
    let open = a.open.iter().find(|o| w.could_start_with(&o.prefix))?;
    Some(Some(format!("{}, so it counts as a match", open.why)))
}

/// A tool call being checked; a Bash command line is analysed once, for all rules.
pub struct Call<'a> {
    pub tool_name: &'a str,
    pub input: &'a Value,
    pub cwd: Option<&'a Path>,
    shell: OnceCell<Analysis>,
}

impl<'a> Call<'a> {
    pub fn new(tool_name: &'a str, input: &'a Value, cwd: Option<&'a Path>) -> Call<'a> {
        Call { tool_name, input, cwd, shell: OnceCell::new() }
    }

    fn shell(&self, line: &str) -> &Analysis {
        self.shell.get_or_init(|| shell::analyze(line))
    }
}

/// The host of a URL (`https://user@host:port/path` -> `host`).
fn host(url: &str) -> Option<String> {
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    let authority = rest.split(['/', '?', '#']).next()?;
    let host = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    let host = host.split(':').next()?;
    (!host.is_empty()).then(|| host.to_ascii_lowercase())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn m(rule: &str, tool: &str, input: Value) -> bool {
        Pattern::parse(rule).unwrap().matches(tool, &input, Some(Path::new("/w/proj")))
    }

    #[test]
    fn bash_commands_match_whole_with_wildcards_and_legacy_prefixes() {
        assert!(m("Bash(git push*)", "Bash", json!({"command": "git push origin main"})));
        assert!(!m("Bash(git push*)", "Bash", json!({"command": "git status"})));
        assert!(m("Bash(npm run test:*)", "Bash", json!({"command": "npm run test:unit"})));
        assert!(m("Bash", "Bash", json!({"command": "anything"})));
        assert!(m("Bash(*)", "Bash", json!({})));
        assert!(!m("Bash(ls)", "Bash", json!({"command": "ls -la"})));
        assert!(!m("Bash(git push*)", "Write", json!({"command": "git push"})));
    }

    #[test]
    fn path_rules_are_gitignore_globs_from_the_session_directory() {
        assert!(m("Write(src/**)", "Write", json!({"file_path": "/w/proj/src/a/b.rs"})));
        assert!(m("Write(src/**)", "Write", json!({"file_path": "src/main.rs"})));
        assert!(!m("Write(src/**)", "Write", json!({"file_path": "/w/proj/docs/a.md"})));
        assert!(!m("Write(src/*)", "Write", json!({"file_path": "/w/proj/src/a/b.rs"})));
        assert!(m("Read(*.env)", "Read", json!({"file_path": "/w/proj/deep/x/.env"})));
        assert!(m("Edit(//etc/**)", "Write", json!({"file_path": "/etc/hosts"})));
        assert!(m("Edit(src/**)", "MultiEdit", json!({"file_path": "/w/proj/src/x"})));
        assert!(!m("Write(src/**)", "Write", json!({"file_path": "/elsewhere/src/x"})));
    }

    #[test]
    fn mcp_and_web_fetch_rules() {
        assert!(m("mcp__*", "mcp__coordd__send_message", json!({})));
        assert!(m("mcp__github__*", "mcp__github__create_issue", json!({})));
        assert!(!m("mcp__github__*", "mcp__coordd__claim", json!({})));
        assert!(m("WebFetch(domain:*.example.com)", "WebFetch", json!({"url": "https://api.example.com/x"})));
        assert!(!m("WebFetch(domain:example.com)", "WebFetch", json!({"url": "https://evil.com/example.com"})));
    }

    #[test]
    fn bad_rules_are_refused_with_the_reason() {
        for bad in ["", "Bash(git", "Two words", "Task(x)", "WebFetch(example.com)"] {
            assert!(Pattern::parse(bad).is_err(), "{bad}");
        }
    }
}
