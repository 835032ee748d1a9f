//! Reservation scopes: normalising never panics; overlap is symmetric; a witness is covered
//! by both scopes; a path both cover means they overlap.
#![no_main]

use coordd::domain::reservations::glob::{covers, normalize, normalize_scope, overlaps, witness};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|input: (&str, &str, &str)| {
    let (a, b, path) = input;
    let (Ok(a), Ok(b)) = (normalize_scope(a), normalize_scope(b)) else { return };
    assert_eq!(overlaps(&a, &b), overlaps(&b, &a), "{a} / {b}");
    if let Some(w) = witness(&a, &b) {
        assert!(covers(&a, &w) && covers(&b, &w), "witness {w} of {a} / {b}");
    }
    if let Ok(p) = normalize(path)
        && covers(&a, &p)
        && covers(&b, &p)
    {
        assert!(overlaps(&a, &b), "{a} and {b} both cover {p}");
    }
});
