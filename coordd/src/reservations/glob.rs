//! Reservation scopes: normalisation, matching a path, and deciding whether two scopes
//! overlap (could ever cover one common path).
//!
//! The scope language, relative to the project (repository) root:
//! - `/` separates segments; `./` prefixes, repeated and trailing slashes are dropped;
//!   absolute paths and `..` segments are refused.
//! - `*` matches any run of characters within a segment, `?` one character but `/`,
//!   `[...]` one character of a class (for overlap it counts as any character but `/`,
//!   which can only add conflicts), and `**` any run of characters across segments
//!   (`a/**/b` also matches `a/b`).
//! - A scope also covers everything below what it names: `src` covers `src/main.rs`,
//!   `src/*` covers `src/a/b.rs`. Reserving a directory by name reserves its contents.
//!
//! Two scopes overlap when some path is covered by both. This is decided exactly over
//! the product of the two patterns' automata (a breadth-first search), so `src/*.rs` and
//! `src/lib.*` overlap (`src/lib.rs`) and `src/*.rs` and `docs/**` do not. Where the
//! language is approximated (character classes) the answer errs towards "overlap".

use std::collections::{HashSet, VecDeque};

/// Longest scope accepted, in characters.
pub const MAX_SCOPE: usize = 1024;

/// What one automaton edge accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Pred {
    Lit(char),
    /// Any character but `/`.
    Seg,
    /// Any character.
    Any,
}

impl Pred {
    fn meets(self, other: Pred) -> bool {
        match (self, other) {
            (Pred::Any, _) | (_, Pred::Any) => true,
            (Pred::Lit(a), Pred::Lit(b)) => a == b,
            (Pred::Lit(c), Pred::Seg) | (Pred::Seg, Pred::Lit(c)) => c != '/',
            (Pred::Seg, Pred::Seg) => true,
        }
    }
}

/// A non-deterministic automaton: per state, epsilon moves and labelled moves.
#[derive(Debug, Default)]
struct Nfa {
    eps: Vec<Vec<usize>>,
    edges: Vec<Vec<(Pred, usize)>>,
    accept: usize,
}

impl Nfa {
    fn state(&mut self) -> usize {
        self.eps.push(Vec::new());
        self.edges.push(Vec::new());
        self.eps.len() - 1
    }

    /// Compile a normalised scope. `below`: also accept `/` followed by anything after a
    /// full match (the scope covers what lies below it).
    fn compile(scope: &str, below: bool) -> Nfa {
        let mut n = Nfa::default();
        let mut cur = n.state();
        let chars: Vec<char> = scope.chars().collect();
        let mut i = 0;
        while i < chars.len() {
            let next = n.state();
            match chars[i] {
                '*' if chars.get(i + 1) == Some(&'*') => {
                    let at_segment_start = i == 0 || chars[i - 1] == '/';
                    if at_segment_start && chars.get(i + 2) == Some(&'/') {
                        // `**/`: nothing, or anything ending in `/`.
                        let inner = n.state();
                        n.eps[cur].push(next);
                        n.edges[cur].push((Pred::Any, inner));
                        n.edges[inner].push((Pred::Any, inner));
                        n.edges[inner].push((Pred::Lit('/'), next));
                        n.edges[cur].push((Pred::Lit('/'), next));
                        i += 3;
                    } else {
                        n.eps[cur].push(next);
                        n.edges[next].push((Pred::Any, next));
                        i += 2;
                    }
                }
                '*' => {
                    n.eps[cur].push(next);
                    n.edges[next].push((Pred::Seg, next));
                    i += 1;
                }
                '?' => {
                    n.edges[cur].push((Pred::Seg, next));
                    i += 1;
                }
                '[' if class_end(&chars, i).is_some() => {
                    n.edges[cur].push((Pred::Seg, next));
                    i = class_end(&chars, i).unwrap_or(i) + 1;
                }
                c => {
                    n.edges[cur].push((Pred::Lit(c), next));
                    i += 1;
                }
            }
            cur = next;
        }
        if below {
            let slash = n.state();
            let rest = n.state();
            n.edges[cur].push((Pred::Lit('/'), slash));
            n.eps[slash].push(rest);
            n.edges[rest].push((Pred::Any, rest));
            let end = n.state();
            n.eps[cur].push(end);
            n.eps[rest].push(end);
            cur = end;
        }
        n.accept = cur;
        n
    }

    fn closure(&self, start: usize) -> Vec<usize> {
        let mut seen = vec![start];
        let mut i = 0;
        while i < seen.len() {
            for &e in &self.eps[seen[i]] {
                if !seen.contains(&e) {
                    seen.push(e);
                }
            }
            i += 1;
        }
        seen
    }
}

/// Index of the `]` closing a class opened at `open`; a `]` right after `[` belongs to
/// the class, as in POSIX.
fn class_end(chars: &[char], open: usize) -> Option<usize> {
    chars.get(open + 2..)?.iter().position(|&c| c == ']').map(|p| open + 2 + p)
}

/// Is there a string both automata accept?
fn intersects(a: &Nfa, b: &Nfa) -> bool {
    let mut seen: HashSet<(usize, usize)> = HashSet::new();
    let mut queue: VecDeque<(usize, usize)> = VecDeque::new();
    for x in a.closure(0) {
        for y in b.closure(0) {
            if seen.insert((x, y)) {
                queue.push_back((x, y));
            }
        }
    }
    while let Some((x, y)) = queue.pop_front() {
        if x == a.accept && y == b.accept {
            return true;
        }
        for &(pa, na) in &a.edges[x] {
            for &(pb, nb) in &b.edges[y] {
                if !pa.meets(pb) {
                    continue;
                }
                for x2 in a.closure(na) {
                    for y2 in b.closure(nb) {
                        if seen.insert((x2, y2)) {
                            queue.push_back((x2, y2));
                        }
                    }
                }
            }
        }
    }
    false
}

/// Normalise a scope or path, or say why it is not acceptable.
pub fn normalize(scope: &str) -> Result<String, String> {
    let s = scope.trim();
    if s.is_empty() {
        return Err("scope must not be empty".into());
    }
    if s.chars().count() > MAX_SCOPE {
        return Err(format!("scope is longer than {MAX_SCOPE} characters"));
    }
    if s.starts_with('/') || s.contains('\\') || s.chars().any(char::is_control) {
        return Err(format!(
            "scope '{scope}' must be a path relative to the project root, with / separators and no control characters"
        ));
    }
    let parts: Vec<&str> = s.split('/').filter(|p| !p.is_empty() && *p != ".").collect();
    if parts.contains(&"..") {
        return Err(format!("scope '{scope}' must not contain '..'"));
    }
    if parts.is_empty() {
        return Err(format!("scope '{scope}' names nothing below the project root"));
    }
    Ok(parts.join("/"))
}

/// Do two normalised scopes cover at least one common path?
pub fn overlaps(a: &str, b: &str) -> bool {
    a == b || intersects(&Nfa::compile(a, true), &Nfa::compile(b, true))
}

/// Does a normalised scope cover this normalised file path (taken literally)?
pub fn covers(scope: &str, path: &str) -> bool {
    let literal: String =
        path.chars().flat_map(|c| if "*?[".contains(c) { vec!['[', c, ']'] } else { vec![c] }).collect();
    // A path is matched exactly: compile it without the "below" extension. Wildcard
    // characters in file names are escaped as one-character classes, which the automaton
    // reads as "any character but /": a file literally named `*` may over-match, never under.
    intersects(&Nfa::compile(scope, true), &Nfa::compile(&literal, false))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ov(a: &str, b: &str) -> bool {
        let (a, b) = (normalize(a).unwrap(), normalize(b).unwrap());
        let r = overlaps(&a, &b);
        assert_eq!(r, overlaps(&b, &a), "overlap must be symmetric for {a} / {b}");
        r
    }

    #[test]
    fn normalises_and_refuses() {
        assert_eq!(normalize("./src//lib.rs/").unwrap(), "src/lib.rs");
        assert_eq!(normalize(" src/*.rs ").unwrap(), "src/*.rs");
        for bad in ["", "  ", "/etc/passwd", "../x", "a/../b", ".", "./", "a\\b"] {
            assert!(normalize(bad).is_err(), "{bad:?} should be refused");
        }
    }

    #[test]
    fn file_against_glob() {
        assert!(ov("src/lib.rs", "src/*.rs"));
        assert!(ov("src/lib.rs", "src/**"));
        assert!(ov("src/lib.rs", "**/*.rs"));
        assert!(ov("src/lib.rs", "src/li?.rs"));
        assert!(ov("src/lib.rs", "src/[lm]ib.rs"));
        assert!(!ov("src/lib.rs", "src/*.md"));
        assert!(!ov("src/lib.rs", "docs/**"));
        assert!(!ov("src/a/lib.rs", "src/*.rs"), "* stays within one segment");
        assert!(!ov("src/lib.rs", "src/lib.rs.bak"));
    }

    #[test]
    fn glob_against_glob() {
        assert!(ov("src/*.rs", "src/lib.*"));
        assert!(ov("src/**/*.rs", "src/a/b/*"));
        assert!(ov("*.rs", "*.rs"));
        assert!(ov("a/**/b", "a/b"));
        assert!(ov("a/**/b", "a/x/y/b"));
        assert!(!ov("src/*.rs", "src/*.md"));
        assert!(!ov("src/*/x", "docs/*/x"));
        assert!(!ov("a/*/c", "a/b/d/c"));
        assert!(ov("a/**/c", "a/b/d/c"));
    }

    #[test]
    fn directories_cover_their_contents() {
        assert!(ov("src", "src/main.rs"));
        assert!(ov("src/", "src/deep/a.rs"));
        assert!(ov("src/*", "src/a/b.rs"), "src/a is covered, so is what lies below it");
        assert!(!ov("src", "srcx/main.rs"));
        assert!(!ov("src/main.rs", "src/main.rs2"));
    }

    #[test]
    fn who_holds_a_file() {
        assert!(covers("src/**", "src/a/b.rs"));
        assert!(covers("src", "src/a/b.rs"));
        assert!(covers("src/*.rs", "src/lib.rs"));
        assert!(!covers("src/*.rs", "src/a/lib.rs"));
        assert!(!covers("src/lib.rs", "src"), "a file path does not cover what is inside a scope");
        assert!(covers("*", "weird*name"));
    }
}
