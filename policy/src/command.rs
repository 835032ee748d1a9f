//! A shell command line as a rule sees it: the whole line, and each simple command in it.
//! `Bash(git push*)` must also gate `cd repo && git push`, `make; git push -f` or
//! `GIT_TRACE=1 git push`, as Claude Code checks each part of a compound command. The line
//! is split at the control operators `&&`, `||`, `;`, `|`, `&` and newlines outside quotes,
//! and each part loses its leading variable assignments and grouping parentheses.
//! Command substitutions (`$(…)`, backticks) are parts of their own as well.

/// The simple commands of `line`, trimmed, in order (empty ones dropped).
pub fn parts(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let (mut single, mut double) = (false, false);
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' if !single => {
                cur.push(c);
                if let Some(n) = chars.next() {
                    cur.push(n);
                }
            }
            '\'' if !double => {
                single = !single;
                cur.push(c);
            }
            '"' if !single => {
                double = !double;
                cur.push(c);
            }
            // A command substitution runs a command of its own, even inside double quotes.
            '$' if !single && chars.peek() == Some(&'(') => {
                chars.next();
                cur.push_str("$(");
                let inner = take_until_close(&mut chars);
                out.extend(parts(&inner));
            }
            '`' if !single => {
                let inner: String = chars.by_ref().take_while(|&n| n != '`').collect();
                out.extend(parts(&inner));
            }
            ';' | '&' | '|' | '\n' if !single && !double => {
                push(&mut out, &cur);
                cur.clear();
            }
            _ => cur.push(c),
        }
    }
    push(&mut out, &cur);
    out
}

/// The text up to the `)` that closes an opened `$(`, nested ones included.
fn take_until_close(chars: &mut std::iter::Peekable<std::str::Chars<'_>>) -> String {
    let mut depth = 1;
    let mut inner = String::new();
    for c in chars.by_ref() {
        match c {
            '(' => depth += 1,
            ')' => {
                depth -= 1;
                if depth == 0 {
                    break;
                }
            }
            _ => {}
        }
        inner.push(c);
    }
    inner
}

/// Add one simple command: without grouping parentheses and leading `NAME=value` words.
fn push(out: &mut Vec<String>, part: &str) {
    let mut rest = part.trim().trim_start_matches(['(', '{']).trim_end_matches([')', '}']).trim();
    while let Some((word, tail)) = rest.split_once(char::is_whitespace) {
        let assignment = word
            .split_once('=')
            .is_some_and(|(name, _)| !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'));
        if !assignment {
            break;
        }
        rest = tail.trim_start();
    }
    if !rest.is_empty() {
        out.push(rest.to_string());
    }
}

#[cfg(test)]
mod tests {
    use super::parts;

    #[test]
    fn control_operators_split_a_line_outside_quotes() {
        assert_eq!(parts("cd /x && git push origin main"), ["cd /x", "git push origin main"]);
        assert_eq!(parts("git status; git push -f"), ["git status", "git push -f"]);
        assert_eq!(parts("make || git push\nls | wc -l &"), ["make", "git push", "ls", "wc -l"]);
        assert_eq!(parts("echo 'a && git push' \"b; c\""), ["echo 'a && git push' \"b; c\""]);
    }

    #[test]
    fn assignments_groups_and_substitutions_are_seen_through() {
        assert_eq!(parts("GIT_TRACE=1 A=b git push"), ["git push"]);
        assert_eq!(parts("(cd x && git push)"), ["cd x", "git push"]);
        assert_eq!(parts("echo $(git push origin) done"), ["git push origin", "echo $( done"]);
        assert_eq!(parts("echo `git push`"), ["git push", "echo"]);
        assert_eq!(parts("  "), Vec::<String>::new());
    }
}
