//! `*` wildcards over whole strings (tool names, agent names, commands, domains): `*`
//! matches any run of characters, `/` and spaces included; nothing else is special.

/// A whole-string pattern where `*` matches anything.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Wildcard {
    parts: Vec<String>,
    star: bool,
}

impl Wildcard {
    pub fn new(pattern: &str) -> Wildcard {
        Wildcard { parts: pattern.split('*').map(str::to_string).collect(), star: pattern.contains('*') }
    }

    pub fn matches(&self, s: &str) -> bool {
        if !self.star {
            return self.parts[0] == s;
        }
        let (first, last) = (&self.parts[0], &self.parts[self.parts.len() - 1]);
        if s.len() < first.len() + last.len() || !s.starts_with(first.as_str()) || !s.ends_with(last.as_str()) {
            return false;
        }
        let mut rest = &s[first.len()..s.len() - last.len()];
        for mid in &self.parts[1..self.parts.len() - 1] {
            match rest.find(mid.as_str()) {
                Some(i) => rest = &rest[i + mid.len()..],
                None => return false,
            }
        }
        true
    }

    /// Could some string that starts with `prefix` match? (For a command whose words are
    /// known only up to a point: `git $X` could be `git push` whatever `$X` holds.)
    pub fn could_start_with(&self, prefix: &str) -> bool {
        let first = &self.parts[0];
        first.starts_with(prefix) || (self.star && prefix.starts_with(first.as_str()))
    }
}

#[cfg(test)]
mod tests {
    use super::Wildcard;

    #[test]
    fn stars_match_any_run_and_the_rest_is_literal() {
        let w = Wildcard::new("git push*");
        assert!(w.matches("git push"));
        assert!(w.matches("git push origin main"));
        assert!(!w.matches("git pull"));
        assert!(Wildcard::new("mcp__*").matches("mcp__coordd__send_message"));
        assert!(Wildcard::new("*rm -rf*").matches("cd x && rm -rf /"));
        assert!(!Wildcard::new("a*b*a").matches("ab"));
        assert!(Wildcard::new("a*b*a").matches("abba"));
        assert!(Wildcard::new("Bash").matches("Bash"));
        assert!(!Wildcard::new("Bash").matches("Bash2"));
        assert!(Wildcard::new("*").matches(""));
    }

    #[test]
    fn a_known_start_could_match_when_the_rest_can_still_fit() {
        let w = Wildcard::new("git push*");
        for prefix in ["", "git ", "git push", "git push origin "] {
            assert!(w.could_start_with(prefix), "{prefix}");
        }
        assert!(!w.could_start_with("git status "));
        assert!(!w.could_start_with("echo "));
        assert!(Wildcard::new("ls").could_start_with("l"));
        assert!(!Wildcard::new("ls").could_start_with("ls -la "));
        assert!(Wildcard::new("*rm -rf*").could_start_with("echo "));
    }
}
