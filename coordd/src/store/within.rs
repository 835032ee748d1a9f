//! List reads that stop at a byte budget, the same way on both backends: a backend streams
//! a statement's rows (SQLite's row iterator, PostgreSQL's `query_raw`) into [`Within`],
//! which maps each through `store::rows` while counting the text it reads, and says when
//! to stop. So reading a page of 1 MiB messages with `limit` 1000 holds about one reply's
//! worth of rows ([`crate::bound::items_budget`]), not 1000 of them.
//!
//! The first row always comes, however large; once the rows taken hold `max_bytes` of text,
//! the next row ends the read and marks it [`Within::cut`] (it is only stepped to, not
//! mapped), unless it belongs with the last one taken (one message's copies, which a page
//! never splits). The domain pages what it got with `bound`, and a cut read is truncated
//! even if the page itself would fit.

use std::cell::Cell;

use crate::error::Result;
use crate::store::rows::RowRead;

/// Whether two consecutive items of a list belong together (a page never splits them).
pub type Same<'a, T> = &'a dyn Fn(&T, &T) -> bool;

/// The rows of a list read that stopped at a byte budget.
#[derive(Debug)]
pub struct Within<T> {
    /// The rows taken, in the statement's order.
    pub items: Vec<T>,
    /// The read stopped at the budget with rows left.
    pub cut: bool,
    bytes: usize,
    max: usize,
}

impl<T> Within<T> {
    /// An empty read that may take rows holding `max_bytes` of text.
    pub fn new(max_bytes: usize) -> Self {
        Within { items: Vec::new(), cut: false, bytes: 0, max: max_bytes }
    }

    /// Offer the statement's next row: mapped by `f` and taken (true: offer the next one),
    /// or, once the budget is spent, the read ends here, cut (false).
    pub fn take(
        &mut self,
        row: &dyn RowRead,
        f: impl Fn(&dyn RowRead) -> Result<T>,
        same: Option<Same<T>>,
    ) -> Result<bool> {
        let spent = self.bytes >= self.max && !self.items.is_empty();
        if spent && same.is_none() {
            self.cut = true;
            return Ok(false);
        }
        let metered = Metered { row, bytes: Cell::new(0) };
        let item = f(&metered)?;
        if spent && !same.is_some_and(|same| self.items.last().is_some_and(|last| same(last, &item))) {
            self.cut = true;
            return Ok(false);
        }
        self.bytes += metered.bytes.get();
        self.items.push(item);
        Ok(true)
    }

    /// Complete the items read (their dependencies, say; the cut stays).
    pub fn and_then<U>(self, f: impl FnOnce(Vec<T>) -> Result<Vec<U>>) -> Result<Within<U>> {
        Ok(Within { items: f(self.items)?, cut: self.cut, bytes: self.bytes, max: self.max })
    }

    /// Map the items (the cut stays).
    pub fn map<U>(self, f: impl FnMut(T) -> U) -> Within<U> {
        Within { items: self.items.into_iter().map(f).collect(), cut: self.cut, bytes: self.bytes, max: self.max }
    }
}

/// A row that counts the text read from it (strings are what make a row large).
struct Metered<'r> {
    row: &'r dyn RowRead,
    bytes: Cell<usize>,
}

impl Metered<'_> {
    fn count(&self, s: Option<&String>) {
        self.bytes.set(self.bytes.get() + s.map_or(0, String::len));
    }
}

impl RowRead for Metered<'_> {
    fn s(&self, i: usize) -> Result<String> {
        let v = self.row.s(i)?;
        self.count(Some(&v));
        Ok(v)
    }
    fn os(&self, i: usize) -> Result<Option<String>> {
        let v = self.row.os(i)?;
        self.count(v.as_ref());
        Ok(v)
    }
    fn i(&self, i: usize) -> Result<i64> {
        self.row.i(i)
    }
    fn oi(&self, i: usize) -> Result<Option<i64>> {
        self.row.oi(i)
    }
    fn b(&self, i: usize) -> Result<bool> {
        self.row.b(i)
    }
    fn f(&self, i: usize) -> Result<f64> {
        self.row.f(i)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A one-column row of text.
    struct Text(String);

    impl RowRead for Text {
        fn s(&self, _: usize) -> Result<String> {
            Ok(self.0.clone())
        }
        fn os(&self, _: usize) -> Result<Option<String>> {
            Ok(Some(self.0.clone()))
        }
        fn i(&self, _: usize) -> Result<i64> {
            Ok(0)
        }
        fn oi(&self, _: usize) -> Result<Option<i64>> {
            Ok(None)
        }
        fn b(&self, _: usize) -> Result<bool> {
            Ok(false)
        }
        fn f(&self, _: usize) -> Result<f64> {
            Ok(0.0)
        }
    }

    fn read(rows: &[&str], max: usize, same: Option<Same<String>>) -> (Vec<String>, bool) {
        let mut w = Within::new(max);
        for r in rows {
            if !w.take(&Text(r.to_string()), |r| r.s(0), same).unwrap() {
                break;
            }
        }
        (w.items, w.cut)
    }

    #[test]
    fn a_read_stops_once_its_text_reaches_the_budget_and_always_takes_the_first_row() {
        assert_eq!(read(&["aaaa", "b", "c"], 2, None), (vec!["aaaa".into()], true));
        assert_eq!(read(&["a", "b", "c"], 2, None), (vec!["a".into(), "b".into()], true));
        assert_eq!(read(&["a", "b"], 5, None), (vec!["a".into(), "b".into()], false));
        assert_eq!(read(&["a", "b"], 2, None), (vec!["a".into(), "b".into()], false), "no row left: not cut");
    }

    #[test]
    fn rows_that_belong_with_the_last_one_are_taken_past_the_budget() {
        let same: Same<String> = &|a, b| a[..1] == b[..1];
        let got = read(&["x1", "x2", "x3", "y1"], 1, Some(same));
        assert_eq!(got, (vec!["x1".into(), "x2".into(), "x3".into()], true));
    }
}
