//! Text output for people: colour only on a terminal (and never with `NO_COLOR`), and
//! tables whose last column is cut to the terminal's width (never when the output goes to
//! a file or a pipe, where nothing is cut).

use std::io::IsTerminal;

/// Colour (bold marks and the like) on stdout? Only on a terminal, without `NO_COLOR`.
pub fn colour() -> bool {
    std::io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
}

/// The terminal's width, when stdout is one.
pub fn width() -> Option<usize> {
    if !std::io::stdout().is_terminal() {
        return None;
    }
    terminal_size::terminal_size().map(|(w, _)| w.0 as usize)
}

/// `text` cut to `max` characters, ending with `…` when cut.
pub fn cut(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_string();
    }
    let mut s: String = text.chars().take(max.saturating_sub(1)).collect();
    s.push('…');
    s
}

/// A table: every column but the last padded to its widest cell, the last one last. On a
/// terminal, cells are capped at `caps[i]` characters and the last column fills what is
/// left of its width (at least 20 characters), cut with `…`; elsewhere nothing is cut.
/// Lines end with no trailing spaces.
pub fn render<const N: usize>(head: [&str; N], rows: &[[String; N]], caps: [usize; N]) -> String {
    render_to(head, rows, caps, width())
}

fn render_to<const N: usize>(head: [&str; N], rows: &[[String; N]], caps: [usize; N], width: Option<usize>) -> String {
    let caps = if width.is_some() { caps } else { [usize::MAX; N] };
    let header = head.map(str::to_string);
    let mut w = [0usize; N];
    for r in std::iter::once(&header).chain(rows) {
        for (i, c) in r.iter().enumerate() {
            w[i] = w[i].max(c.chars().count().min(caps[i]));
        }
    }
    let mut last = usize::MAX;
    if let Some(total) = width {
        // Room for the last column (up to 20 characters of it), taken from the widest other
        // columns first, none below 8 characters.
        let want = w[N - 1].min(20);
        loop {
            let fixed: usize = w[..N - 1].iter().map(|x| x + 2).sum();
            let widest = (0..N - 1).max_by_key(|&i| w[i]).filter(|&i| w[i] > 8);
            match widest {
                Some(i) if fixed + want > total => w[i] -= 1,
                _ => {
                    last = total.saturating_sub(fixed).max(1);
                    break;
                }
            }
        }
    }
    let mut out = String::new();
    for r in std::iter::once(&header).chain(rows) {
        let mut line = String::new();
        for (i, c) in r.iter().enumerate().take(N - 1) {
            line.push_str(&format!("{:<width$}  ", cut(c, w[i]), width = w[i]));
        }
        line.push_str(&cut(&r[N - 1], last));
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_are_padded_and_capped() {
        let rows = [["abcdefgh".to_string(), "x".to_string()], ["ab".to_string(), "y".to_string()]];
        let t = render_to(["ID", "NOTE"], &rows, [5, usize::MAX], Some(80));
        assert_eq!(t, "ID     NOTE\nabcd…  x\nab     y\n");
        let whole = render_to(["ID", "NOTE"], &rows, [5, usize::MAX], None);
        assert_eq!(whole, "ID        NOTE\nabcdefgh  x\nab        y\n", "nothing is cut outside a terminal");
        let long = [["a".repeat(30), "b".repeat(40)]];
        for line in render_to(["ID", "NOTE"], &long, [usize::MAX; 2], Some(40)).lines() {
            assert!(line.chars().count() <= 40, "{line}");
        }
    }
}
