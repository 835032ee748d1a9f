//! Property tests of the scope language on generated scopes and paths: matching agrees
//! with `globset` itself (the reference), and overlap is exact against a brute-force search
//! over every short path, with a witness both scopes cover.

use globset::GlobBuilder;
use proptest::prelude::*;

use super::glob::{covers, dfa_covers, normalize_scope, overlaps, witness};

/// Scopes over a tiny alphabet, so that short paths exercise every construct.
fn scope() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        4 => "[ab]".prop_map(String::from),
        1 => Just(".".to_string()),
        2 => Just("*".to_string()),
        2 => Just("?".to_string()),
        1 => Just("[ab]".to_string()),
        1 => Just("[!a]".to_string()),
    ];
    let segment = prop_oneof![
        6 => prop::collection::vec(piece, 1..4).prop_map(|p| p.concat()),
        1 => Just("**".to_string()),
    ];
    prop::collection::vec(segment, 1..4)
        .prop_map(|s| s.join("/"))
        .prop_filter_map("a valid scope", |s| normalize_scope(&s).ok())
}

/// Paths over the same alphabet.
fn path() -> impl Strategy<Value = String> {
    prop::collection::vec("[ab.]{1,3}", 1..4).prop_map(|s| s.join("/"))
}

/// Every path of at most `max_segments` segments of 1 or 2 characters from `a`, `b`, `.`
/// (segments `.` and `..` excluded, as the scope rules refuse them).
fn all_paths(max_segments: usize) -> Vec<String> {
    let alphabet = ['a', 'b', '.'];
    let mut segments: Vec<String> = alphabet.iter().map(|c| c.to_string()).collect();
    for a in alphabet {
        for b in alphabet {
            segments.push(format!("{a}{b}"));
        }
    }
    segments.retain(|s| s != "." && s != "..");
    let mut paths: Vec<String> = segments.clone();
    let mut frontier = segments.clone();
    for _ in 1..max_segments {
        frontier = frontier.iter().flat_map(|p| segments.iter().map(move |s| format!("{p}/{s}"))).collect();
        paths.extend(frontier.iter().cloned());
    }
    paths
}

/// Reference: globset's matcher on the path and each folder it is in.
struct Reference(globset::GlobMatcher);

impl Reference {
    fn new(scope: &str) -> Reference {
        let g = GlobBuilder::new(scope).literal_separator(true).backslash_escape(false).build().unwrap();
        Reference(g.compile_matcher())
    }

    fn covers(&self, path: &str) -> bool {
        let mut prefix = path;
        loop {
            if self.0.is_match(prefix) {
                return true;
            }
            match prefix.rfind('/') {
                Some(i) => prefix = &prefix[..i],
                None => return false,
            }
        }
    }
}

fn reference_covers(scope: &str, path: &str) -> bool {
    Reference::new(scope).covers(path)
}

static PATHS: std::sync::LazyLock<Vec<String>> = std::sync::LazyLock::new(|| all_paths(3));

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn matching_agrees_with_globset(scope in scope(), path in path()) {
        let want = reference_covers(&scope, &path);
        prop_assert_eq!(covers(&scope, &path), want, "covers({}, {})", scope, path);
        prop_assert_eq!(dfa_covers(&scope, &path), want, "the overlap automaton of {} on {}", scope, path);
    }

    #[test]
    fn overlap_is_exact_against_brute_force(a in scope(), b in scope()) {
        let (ra, rb) = (Reference::new(&a), Reference::new(&b));
        let common = PATHS.iter().find(|p| ra.covers(p) && rb.covers(p));
        let found = overlaps(&a, &b);
        prop_assert_eq!(found, overlaps(&b, &a), "symmetric");
        if let Some(p) = &common {
            prop_assert!(found, "{} and {} both cover {} but do not overlap", a, b, p);
        }
        if found && a != b {
            let w = witness(&a, &b);
            prop_assert!(w.is_some(), "an overlap has a witness");
            let w = w.unwrap();
            prop_assert!(ra.covers(&w) && rb.covers(&w), "witness {} of {} / {}", w, a, b);
        }
    }
}
