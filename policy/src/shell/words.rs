//! The value of one shell word, as the command it belongs to receives it: quotes removed
//! (`'git'`, `"push"`, `$'\x67it'`), backslash escapes applied (`\git`), adjacent pieces
//! joined (`'gi't`). A word whose value is only known when it runs is `None`: a parameter
//! or command substitution (`$X`, `$(…)`, backticks), arithmetic, or an unquoted glob
//! or brace pattern (`pu?h` can become `push` in a folder holding such a file).

use tree_sitter::Node;

/// A word's value, or `None` when it is computed at run time.
pub type Word = Option<String>;

/// The value of the argument or name node `n` of `src`.
pub fn value(n: Node<'_>, src: &str) -> Word {
    let text = &src[n.byte_range()];
    match n.kind() {
        "command_name" => n.named_child(0).and_then(|c| value(c, src)),
        "word" => unquoted(text),
        "number" if n.named_child_count() == 0 => Some(text.to_string()),
        "raw_string" => Some(text.trim_start_matches('\'').trim_end_matches('\'').to_string()),
        "ansi_c_string" => Some(ansi_c(text.strip_prefix("$'")?.strip_suffix('\'')?)),
        "string" | "translated_string" => double_quoted(n, src),
        "concatenation" => joined(n, src, unquoted),
        _ => None,
    }
}

/// The pieces of a node and the text between them, each piece's value joined; the text
/// between named children is read by `gap`.
fn joined(n: Node<'_>, src: &str, gap: fn(&str) -> Word) -> Word {
    let mut out = String::new();
    let mut at = n.start_byte();
    let mut cursor = n.walk();
    for c in n.named_children(&mut cursor) {
        out += &gap(&src[at..c.start_byte()])?;
        out += &value(c, src)?;
        at = c.end_byte();
    }
    out += &gap(&src[at..n.end_byte()])?;
    Some(out)
}

/// `"…"`: the content between the quotes, `$X` and `$(…)` inside it unknown.
fn double_quoted(n: Node<'_>, src: &str) -> Word {
    let mut out = String::new();
    let inner_start = n.start_byte() + src[n.byte_range()].find('"')? + 1;
    let inner_end = n.end_byte().checked_sub(1)?;
    let mut at = inner_start;
    let mut cursor = n.walk();
    for c in n.named_children(&mut cursor) {
        if c.kind() != "string_content" {
            return None;
        }
        out += &in_double_quotes(&src[at.min(c.start_byte())..c.start_byte()]);
        out += &in_double_quotes(&src[c.byte_range()]);
        at = c.end_byte();
    }
    if at < inner_end {
        out += &in_double_quotes(&src[at..inner_end]);
    }
    Some(out)
}

/// Backslashes inside double quotes escape only `$`, `` ` ``, `"`, `\` and a newline.
fn in_double_quotes(s: &str) -> String {
    let mut out = String::new();
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        match (c, chars.clone().next()) {
            ('\\', Some(n @ ('$' | '`' | '"' | '\\'))) => {
                out.push(n);
                chars.next();
            }
            ('\\', Some('\n')) => {
                chars.next();
            }
            _ => out.push(c),
        }
    }
    out
}

/// An unquoted piece: `\x` is `x`, `\`+newline is nothing; a glob (`*`, `?`, `[…]`) or
/// a brace list (`{a,b}`, `{1..3}`) makes it unknown.
pub fn unquoted(s: &str) -> Word {
    let mut out = String::new();
    let mut chars = s.chars().peekable();
    let mut open_bracket = false;
    let mut open_brace = false;
    while let Some(c) = chars.next() {
        match c {
            '\\' => match chars.next() {
                Some('\n') | None => {}
                Some(n) => out.push(n),
            },
            '*' | '?' => return None,
            '[' => {
                open_bracket = true;
                out.push(c);
            }
            ']' if open_bracket => return None,
            '{' => {
                open_brace = true;
                out.push(c);
            }
            ',' if open_brace => return None,
            '.' if open_brace && chars.peek() == Some(&'.') => return None,
            _ => out.push(c),
        }
    }
    Some(out)
}

/// The content of `$'…'`, its escapes decoded as bash does.
pub fn ansi_c(s: &str) -> String {
    let mut out = String::new();
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        let Some(e) = chars.next() else {
            out.push('\\');
            break;
        };
        let simple = match e {
            'a' => Some('\x07'),
            'b' => Some('\x08'),
            'e' | 'E' => Some('\x1b'),
            'f' => Some('\x0c'),
            'n' => Some('\n'),
            'r' => Some('\r'),
            't' => Some('\t'),
            'v' => Some('\x0b'),
            '\\' | '\'' | '"' | '?' => Some(e),
            _ => None,
        };
        if let Some(ch) = simple {
            out.push(ch);
            continue;
        }
        let (radix, max) = match e {
            '0'..='7' => (8, 3),
            'x' => (16, 2),
            'u' => (16, 4),
            'U' => (16, 8),
            'c' => {
                if let Some(x) = chars.next() {
                    out.push(char::from((x as u8) & 0x1f));
                }
                continue;
            }
            _ => {
                out.push('\\');
                out.push(e);
                continue;
            }
        };
        let mut digits = String::new();
        if radix == 8 {
            digits.push(e);
        }
        while digits.len() < max {
            match chars.peek() {
                Some(d) if d.is_digit(radix) => digits.push(chars.next().unwrap_or('0')),
                _ => break,
            }
        }
        match u32::from_str_radix(&digits, radix).ok().and_then(char::from_u32) {
            Some(ch) if !digits.is_empty() => out.push(ch),
            _ => {
                out.push('\\');
                out.push(e);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unquoted_words_lose_their_backslashes_and_globs_are_unknown() {
        assert_eq!(unquoted(r"\git").as_deref(), Some("git"));
        assert_eq!(unquoted("pu\\\nsh").as_deref(), Some("push"));
        assert_eq!(unquoted("[").as_deref(), Some("["));
        assert_eq!(unquoted("{}").as_deref(), Some("{}"));
        for glob in ["pu?h", "p*", "pu[s]h", "{git,push}", "{1..3}"] {
            assert_eq!(unquoted(glob), None, "{glob}");
        }
    }

    #[test]
    fn ansi_c_escapes_decode_as_bash_does() {
        assert_eq!(ansi_c(r"\x67it"), "git");
        assert_eq!(ansi_c(r"\147it\040push"), "git push");
        assert_eq!(ansi_c(r"\u0067it\t\'"), "git\t'");
        assert_eq!(ansi_c(r"\q"), r"\q");
    }
}
