//! What a shell command line runs, as a `Bash(...)` rule must see it. The line is parsed
//! with tree-sitter-bash (the grammar Codex itself parses its commands with), and every
//! simple command anywhere in the tree counts: in lists (`;`, `&&`, `||`), pipes,
//! subshells, groups, functions, loops, command and process substitutions, heredoc bodies.
//!
//! Each simple command is seen as written (`/usr/bin/git -C . push`) and then as what it
//! runs, step by step: quotes and escapes removed (`'git' pu\sh`), the path dropped from
//! the name (`git`), wrappers unwrapped (`env`, `sudo`, `nohup`, `timeout`, `xargs`, …),
//! git's global options dropped (`git push`), and the strings that other commands run as
//! shell code parsed in turn (`bash -c '…'`, `eval`, `trap`, `alias`, a heredoc fed to a
//! shell, git's `!` aliases and pager settings).
//!
//! What cannot be known before it runs is an [`Open`] command: its known start (`git `
//! for `git $SUB`, nothing for `$CMD` or `eval "$X"`) and why. A rule gates it when some
//! command with that start could match (see `Wildcard::could_start_with`).

mod git;
mod resolve;
mod words;
mod wrappers;

use tree_sitter::{Node, Parser};

/// Everything a command line runs.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Analysis {
    pub seen: Vec<Seen>,
    pub open: Vec<Open>,
}

/// A command the line runs, words joined by one space.
#[derive(Debug, Clone, PartialEq)]
pub struct Seen {
    pub command: String,
    /// The command as written, when it differs (`bash -c 'git push'` for `git push`).
    pub written: Option<String>,
}

/// A command known only up to a point.
#[derive(Debug, Clone, PartialEq)]
pub struct Open {
    /// What is known of its start (may be empty).
    pub prefix: String,
    /// Why the rest is unknown, for the model and the approver.
    pub why: String,
}

/// How deep strings run as code may nest (`bash -c "eval '…'"`) before the rest counts
/// as unknown.
const MAX_DEPTH: usize = 8;
/// Longest command text quoted in a reason.
const QUOTE_MAX: usize = 120;

/// Analyse a command line.
pub fn analyze(line: &str) -> Analysis {
    let mut w = Walker { out: Analysis::default(), depth: 0 };
    w.program(line, None);
    w.out
}

/// `s` in backticks, shortened to [`QUOTE_MAX`] characters.
pub(crate) fn quote(s: &str) -> String {
    let s = s.trim();
    match s.char_indices().nth(QUOTE_MAX) {
        Some((i, _)) => format!("`{}…`", &s[..i]),
        None => format!("`{s}`"),
    }
}

/// Where a command's standard input comes from.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Stdin {
    /// Whatever the session gives it (a terminal the client may write to later).
    Inherited,
    /// The previous command of a pipe.
    Pipe,
    /// A file (`< script.sh`).
    File,
    /// A heredoc or herestring: its text, if known.
    Text(Option<String>),
}

pub(crate) struct Walker {
    pub out: Analysis,
    depth: usize,
}

impl Walker {
    /// Record a command; `written` is the outermost command it comes from.
    pub fn seen(&mut self, command: String, written: &str) {
        let written = (command != written.trim()).then(|| written.trim().to_string());
        if !self.out.seen.iter().any(|s| s.command == command) {
            self.out.seen.push(Seen { command, written });
        }
    }

    pub fn open(&mut self, prefix: String, why: String) {
        if !self.out.open.iter().any(|o| o.prefix == prefix) {
            self.out.open.push(Open { prefix, why });
        }
    }

    /// Every simple command of the program `src`. `origin` is the command whose string
    /// `src` is (`bash -c '…'`), `None` at the top.
    pub fn program(&mut self, src: &str, origin: Option<&str>) {
        if self.depth >= MAX_DEPTH {
            let why = format!("{} nests commands in strings too deeply to follow", quote(origin.unwrap_or(src)));
            return self.open(String::new(), why);
        }
        let mut parser = Parser::new();
        let tree = match parser.set_language(&tree_sitter_bash::LANGUAGE.into()) {
            Ok(()) => parser.parse(src, None),
            Err(_) => None,
        };
        let Some(tree) = tree else {
            return self.open(String::new(), format!("{} could not be parsed", quote(origin.unwrap_or(src))));
        };
        if tree.root_node().has_error() {
            let why = match origin {
                Some(o) => format!("{} runs {}, which is not a shell command that can be parsed", quote(o), quote(src)),
                None => format!("{} cannot be parsed as a shell command", quote(src)),
            };
            self.open(String::new(), why);
        }
        self.depth += 1;
        // Depth-first over every node, without recursion (a line may nest deeply).
        let mut stack = vec![tree.root_node()];
        while let Some(n) = stack.pop() {
            match n.kind() {
                "command" => self.command(n, src, origin),
                "variable_assignment" => self.assignment(n, src, origin),
                _ => {}
            }
            let mut cursor = n.walk();
            let children: Vec<Node<'_>> = n.children(&mut cursor).collect();
            stack.extend(children.into_iter().rev());
        }
        self.depth -= 1;
    }

    /// A simple command: seen as written, then resolved.
    fn command(&mut self, n: Node<'_>, src: &str, origin: Option<&str>) {
        let Some(name) = n.child_by_field_name("name") else { return };
        let written = src[name.start_byte()..n.end_byte()].trim();
        let origin = origin.unwrap_or(written);
        self.seen(written.split_whitespace().collect::<Vec<_>>().join(" "), origin);
        let mut cursor = n.walk();
        let mut words = vec![words::value(name, src)];
        words.extend(n.children_by_field_name("argument", &mut cursor).map(|a| words::value(a, src)));
        let stdin = stdin(n, src);
        resolve::run(self, words, &stdin, origin);
    }

    /// `GIT_PAGER='git push' git log`: variables whose value git or the shell runs.
    fn assignment(&mut self, n: Node<'_>, src: &str, origin: Option<&str>) {
        let (Some(name), Some(value)) = (n.child_by_field_name("name"), n.child_by_field_name("value")) else {
            return;
        };
        let name = &src[name.byte_range()];
        if resolve::RUN_VARIABLES.contains(&name) {
            let written = origin.unwrap_or(&src[n.byte_range()]).to_string();
            self.code(words::value(value, src), &written, &format!("{name}'s value"));
        }
    }

    /// A string that something runs as shell code: parsed in turn, or unknown.
    pub fn code(&mut self, code: Option<String>, written: &str, what: &str) {
        match code {
            Some(c) => self.program(&c, Some(written)),
            None => self.open(String::new(), format!("{}: {what} is computed when it runs", quote(written))),
        }
    }
}

/// Where the command `n` reads its input: a heredoc or herestring, a file, or the
/// previous command of a pipe.
fn stdin(n: Node<'_>, src: &str) -> Stdin {
    let mut redirects: Vec<Node<'_>> = Vec::new();
    let mut cursor = n.walk();
    redirects.extend(n.children_by_field_name("redirect", &mut cursor));
    let mut top = n;
    if let Some(p) = n.parent().filter(|p| p.kind() == "redirected_statement") {
        let mut c = p.walk();
        redirects.extend(p.named_children(&mut c).filter(|r| r.kind().ends_with("_redirect")));
        top = p;
    }
    for r in redirects {
        match r.kind() {
            "herestring_redirect" => return Stdin::Text(r.named_child(0).and_then(|v| words::value(v, src))),
            "heredoc_redirect" => return Stdin::Text(heredoc(r, src)),
            "file_redirect"
                if src[r.byte_range()].trim_start_matches(|c: char| c.is_ascii_digit()).starts_with('<') =>
            {
                return Stdin::File;
            }
            _ => {}
        }
    }
    match top.parent() {
        Some(p) if p.kind() == "pipeline" && p.named_child(0).is_some_and(|first| first.id() != top.id()) => {
            Stdin::Pipe
        }
        _ => Stdin::Inherited,
    }
}

/// A heredoc's text: known when its delimiter is quoted (no expansion) or when the body
/// holds no expansion.
fn heredoc(r: Node<'_>, src: &str) -> Option<String> {
    let mut cursor = r.walk();
    let children: Vec<Node<'_>> = r.named_children(&mut cursor).collect();
    let quoted =
        children.iter().any(|c| c.kind() == "heredoc_start" && src[c.byte_range()].contains(['\'', '"', '\\']));
    let body = children.iter().find(|c| c.kind() == "heredoc_body")?;
    let expands = {
        let mut c = body.walk();
        body.named_children(&mut c).any(|p| p.kind() != "heredoc_content")
    };
    (quoted || !expands).then(|| src[body.byte_range()].to_string())
}

#[cfg(test)]
mod tests;
