//! Reservation scopes: normalisation, whether a scope covers a path, and whether two
//! scopes overlap (could ever cover one common path).
//!
//! The scope language is `globset`'s, with `*` and `?` never matching `/`: `*` any run of
//! characters within a segment, `?` one byte but `/`, `[...]` / `[!...]` one character of
//! a class (which, as in `globset`, may be `/`), `**` any run of segments (`a/**/b` also
//! matches `a/b`). Braces are refused: alternatives are reserved one scope at a time.
//! Scopes are relative to the project root: `./` prefixes, repeated and trailing slashes
//! are dropped; absolute paths, `..` segments, backslashes and control characters are
//! refused. A scope also covers everything below what it names: `src` covers
//! `src/main.rs`, and `src/*` covers `src/a/b.rs`.
//!
//! Matching ([`covers`]) is `globset`'s own matcher, applied to the path and to each of
//! its ancestors. Overlap ([`overlaps`]) needs a search no glob library offers: both
//! scopes' "covers" languages, compiled from `globset`'s regular expression into DFAs, are
//! explored together with a third DFA of well-formed paths, breadth first, until a common
//! accepted path is found (which is returned as the witness) or none can exist. It is
//! therefore exact with respect to [`covers`].

use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::{Arc, Mutex, OnceLock};

use globset::{Glob, GlobBuilder, GlobMatcher};
use regex_automata::Anchored;
use regex_automata::dfa::{Automaton, StartKind, dense};
use regex_automata::util::primitives::StateID;
use regex_automata::util::start;

/// Longest scope accepted, in characters.
pub const MAX_SCOPE: usize = 1024;

/// Normalise a path or scope, or say why it is not acceptable.
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

/// Normalise a scope and check that it is a valid glob.
pub fn normalize_scope(scope: &str) -> Result<String, String> {
    let s = normalize(scope)?;
    if s.contains(['{', '}']) {
        return Err(format!("scope '{scope}' must not contain '{{' or '}}' (reserve each alternative on its own)"));
    }
    glob(&s).map_err(|e| format!("scope '{scope}' is not a valid glob: {e}"))?;
    Ok(s)
}

fn glob(scope: &str) -> Result<Glob, globset::Error> {
    GlobBuilder::new(scope).literal_separator(true).backslash_escape(false).build()
}

/// A compiled scope: its matcher and the DFA of everything it covers.
struct Compiled {
    matcher: GlobMatcher,
    dfa: dense::DFA<Vec<u32>>,
}

/// Compiled scopes are cached: a reservation is compared with every active one.
const CACHE_LIMIT: usize = 4096;

fn compiled(scope: &str) -> Option<Arc<Compiled>> {
    static CACHE: OnceLock<Mutex<HashMap<String, Arc<Compiled>>>> = OnceLock::new();
    let cache = CACHE.get_or_init(Default::default);
    if let Some(c) = cache.lock().ok()?.get(scope) {
        return Some(c.clone());
    }
    let g = glob(scope).ok()?;
    let inner = g.regex().strip_prefix("(?-u)^")?.strip_suffix('$')?;
    let dfa = anchored_dfa(&format!("(?-u)^(?:{inner})(?:/.*)?$"))?;
    let c = Arc::new(Compiled { matcher: g.compile_matcher(), dfa });
    let mut map = cache.lock().ok()?;
    if map.len() >= CACHE_LIMIT {
        map.clear();
    }
    map.insert(scope.to_string(), c.clone());
    Some(c)
}

fn anchored_dfa(pattern: &str) -> Option<dense::DFA<Vec<u32>>> {
    use regex_automata::{nfa::thompson, util::syntax};
    dense::Builder::new()
        .configure(dense::Config::new().start_kind(StartKind::Anchored))
        // Scopes match bytes, as globset's own (?-u) regexes do.
        .syntax(syntax::Config::new().utf8(false))
        .thompson(thompson::Config::new().utf8(false))
        .build(pattern)
        .map_err(|e| tracing::error!(pattern, error = %e, "cannot compile a scope automaton"))
        .ok()
}

/// Well-formed paths: valid UTF-8, segments without `/` or control characters, none of
/// them empty, `.` or `..`.
fn paths() -> &'static dense::DFA<Vec<u32>> {
    static PATHS: OnceLock<dense::DFA<Vec<u32>>> = OnceLock::new();
    PATHS.get_or_init(|| {
        let seg = r"(?:[^/\p{Cc}]*[^/.\p{Cc}][^/\p{Cc}]*|\.{3,})";
        anchored_dfa(&format!("^{seg}(?:/{seg})*$")).expect("the path language compiles")
    })
}

/// Does a normalised scope cover this normalised file path (itself, or a folder it is in)?
pub fn covers(scope: &str, path: &str) -> bool {
    let Some(c) = compiled(scope) else { return false };
    let mut prefix = path;
    loop {
        if c.matcher.is_match(prefix) {
            return true;
        }
        match prefix.rfind('/') {
            Some(i) => prefix = &prefix[..i],
            None => return false,
        }
    }
}

/// Do two normalised scopes cover at least one common path?
pub fn overlaps(a: &str, b: &str) -> bool {
    a == b || witness(a, b).is_some()
}

/// A path both scopes cover, if there is one: the shortest such path.
pub fn witness(a: &str, b: &str) -> Option<String> {
    let (ca, cb) = (compiled(a)?, compiled(b)?);
    let dfas = [&ca.dfa, &cb.dfa, paths()];
    let starts = dfas.map(|d| d.start_state(&start::Config::new().anchored(Anchored::Yes)).ok());
    let start = [starts[0]?, starts[1]?, starts[2]?];
    let accepts = |s: &[StateID; 3]| (0..3).all(|i| dfas[i].is_match_state(dfas[i].next_eoi_state(s[i])));
    let mut seen: HashSet<[StateID; 3]> = HashSet::from([start]);
    let mut queue: VecDeque<([StateID; 3], Vec<u8>)> = VecDeque::from([(start, Vec::new())]);
    while let Some((state, path)) = queue.pop_front() {
        if !path.is_empty() && accepts(&state) {
            return String::from_utf8(path).ok();
        }
        for byte in 0..=255u8 {
            let next = [0, 1, 2].map(|i| dfas[i].next_state(state[i], byte));
            if next.iter().enumerate().any(|(i, s)| dfas[i].is_dead_state(*s) || dfas[i].is_quit_state(*s)) {
                continue;
            }
            if seen.insert(next) {
                let mut p = path.clone();
                p.push(byte);
                queue.push_back((next, p));
            }
        }
    }
    None
}

/// Search input for tests: does the cover DFA of `scope` accept `path`?
#[cfg(test)]
pub(super) fn dfa_covers(scope: &str, path: &str) -> bool {
    let c = compiled(scope).unwrap();
    let input = regex_automata::Input::new(path).anchored(Anchored::Yes);
    c.dfa.try_search_fwd(&input).unwrap().is_some_and(|m| m.offset() == path.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ov(a: &str, b: &str) -> bool {
        let (a, b) = (normalize_scope(a).unwrap(), normalize_scope(b).unwrap());
        let r = overlaps(&a, &b);
        assert_eq!(r, overlaps(&b, &a), "overlap must be symmetric for {a} / {b}");
        if let Some(w) = witness(&a, &b) {
            assert!(covers(&a, &w) && covers(&b, &w), "{w} is covered by both {a} and {b}");
        }
        r
    }

    #[test]
    fn normalises_and_refuses() {
        assert_eq!(normalize("./src//lib.rs/").unwrap(), "src/lib.rs");
        assert_eq!(normalize(" src/*.rs ").unwrap(), "src/*.rs");
        for bad in ["", "  ", "/etc/passwd", "../x", "a/../b", ".", "./", "a\\b"] {
            assert!(normalize(bad).is_err(), "{bad:?} should be refused");
        }
        for bad in ["src/{a,b}.rs", "src/[", "src/[z-a]"] {
            assert!(normalize_scope(bad).is_err(), "{bad:?} should be refused as a scope");
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
        assert_eq!(witness("src/*.rs", "src/lib.*").as_deref(), Some("src/lib.rs"));
        assert!(ov("src/**/*.rs", "src/a/b/*"));
        assert!(ov("*.rs", "*.rs"));
        assert!(ov("a/**/b", "a/b"));
        assert!(ov("a/**/b", "a/x/y/b"));
        assert!(!ov("src/*.rs", "src/*.md"));
        assert!(!ov("src/*/x", "docs/*/x"));
        assert!(!ov("a/*/c", "a/b/d/c"));
        assert!(ov("a/**/c", "a/b/d/c"));
    }

    /// Regression: a character class used to count as "any character", so `src/[ab].rs`
    /// covered `src/c.rs` and the git guard refused a legitimate commit.
    #[test]
    fn character_classes_are_exact() {
        assert!(covers("src/[ab].rs", "src/a.rs"));
        assert!(!covers("src/[ab].rs", "src/c.rs"));
        assert!(!ov("src/[ab].rs", "src/c.rs"));
        assert!(!ov("src/[ab].rs", "src/[cd].rs"));
        assert!(ov("src/[ab].rs", "src/[bc].rs"));
        assert!(!ov("src/[!ab].rs", "src/[ab].rs"));
        assert!(!ov("x[!a]", "xa"));
        assert!(ov("x[!a]", "x?"));
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

    #[test]
    fn the_cover_automaton_agrees_with_the_matcher() {
        for (scope, path) in [("src/*.rs", "src/lib.rs"), ("src", "src/a/b"), ("a/**/b", "a/b"), ("x[!a]", "x/")] {
            assert_eq!(dfa_covers(scope, path), covers(scope, path), "{scope} {path}");
        }
    }
}
