//! Replies bounded by bytes as well as by count: the one mechanism behind every list and
//! read method's `truncated` and `next_after` (protocol §1.7).
//!
//! A list keeps its leading items while their JSON size stays within
//! [`items_budget`] ([`ITEMS_BUDGET`]: the reply's [`coord_proto::MAX_REPLY_BYTES`] less room for the
//! reply's other fields); the first item always comes, however large, so a client that
//! continues from the last item it got always makes progress. Sizes are counted per item
//! while serializing into no buffer ([`json_size`]), or estimated (`weight::weight` for
//! events), so nothing larger than the bound is ever built to find out. The store's list
//! reads stop at the same budget ([`crate::store::rows::Within`]), so reading a page holds
//! about one reply's worth of rows, whatever its `limit`.
//!
//! [`BUDGET_ENV`] lowers the budget (never raises it): a testing aid, so the end-to-end
//! suites can page lists whose items are small without writing 16 MiB of them.

use std::io;
use std::sync::OnceLock;

use serde::Serialize;

use crate::error::{Error, Result};
use crate::store::within::Within;

/// Room left in a reply for what is not the list itself (the envelope, a thread, counts).
pub const ENVELOPE_ALLOWANCE: usize = 64 * 1024;
/// Most bytes of listed items one reply carries.
pub const ITEMS_BUDGET: usize = coord_proto::MAX_REPLY_BYTES - ENVELOPE_ALLOWANCE;

/// Environment variable that lowers [`items_budget`] to this many bytes (read once at
/// start; a larger value, or one that does not parse, leaves [`ITEMS_BUDGET`]). A testing
/// aid of the end-to-end suites, as `COORDD_CLOCK_OFFSET_SECS` is.
pub const BUDGET_ENV: &str = "COORDD_REPLY_BUDGET_BYTES";

/// Most bytes of listed items one reply carries: [`ITEMS_BUDGET`], or less under
/// [`BUDGET_ENV`].
pub fn items_budget() -> usize {
    static BUDGET: OnceLock<usize> = OnceLock::new();
    *BUDGET.get_or_init(|| {
        let set = std::env::var(BUDGET_ENV).ok().and_then(|v| v.trim().parse::<usize>().ok());
        set.map_or(ITEMS_BUDGET, |b| b.clamp(1, ITEMS_BUDGET))
    })
}

/// The exact JSON size of `v`, counted while serializing it into no buffer.
pub fn json_size<T: Serialize>(v: &T) -> usize {
    let mut counter = Counter(0);
    // Writing to a counter cannot fail, and our types always serialize.
    let _ = serde_json::to_writer(&mut counter, v);
    counter.0
}

struct Counter(usize);

impl io::Write for Counter {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0 += buf.len();
        Ok(buf.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// Keep the leading `items` whose `weight`s fit in `max_bytes` (always the first, however
/// large); whether some were left out.
pub fn fit<T>(items: Vec<T>, max_bytes: usize, weight: impl Fn(&T) -> usize) -> (Vec<T>, bool) {
    let read = items.len();
    let mut bytes = 0;
    let kept = items
        .iter()
        .take_while(|item| {
            bytes += weight(item);
            bytes <= max_bytes
        })
        .count()
        .max(1.min(read));
    let mut items = items;
    items.truncate(kept);
    (items, kept < read)
}

/// A page of a list: the items that fit in [`items_budget`], whether some were left out,
/// and the cursor to continue after (the last item's key, only when truncated).
pub struct Page<T, K> {
    pub items: Vec<T>,
    pub truncated: bool,
    pub next_after: Option<K>,
}

/// Bound `items` (already in the list's order and within its `limit`) by
/// [`items_budget`], measuring each item's JSON; `key` names the cursor of an item.
pub fn page<T: Serialize, K>(items: Vec<T>, key: impl Fn(&T) -> K) -> Page<T, K> {
    page_within(items, items_budget(), key)
}

/// [`page`] of a store read that may have stopped at the budget: a read that was cut is
/// truncated (continuing after its last item) even when what it got fits.
pub fn page_read<T: Serialize, K>(read: Within<T>, key: impl Fn(&T) -> K) -> Page<T, K> {
    page_cut(read.items, read.cut, key)
}

/// [`page`] of items whose reading stopped early at the budget when `cut`.
pub fn page_cut<T: Serialize, K>(items: Vec<T>, cut: bool, key: impl Fn(&T) -> K) -> Page<T, K> {
    let mut page = page(items, &key);
    if cut && !page.truncated {
        page.truncated = true;
        page.next_after = page.items.last().map(&key);
    }
    page
}

/// [`page`] within `max_bytes` (what is left of the budget after a reply's other large
/// fields: a task beside its attempts).
pub fn page_within<T: Serialize, K>(items: Vec<T>, max_bytes: usize, key: impl Fn(&T) -> K) -> Page<T, K> {
    let (items, truncated) = fit(items, max_bytes, json_size);
    let next_after = if truncated { items.last().map(key) } else { None };
    Page { items, truncated, next_after }
}

/// What is left of [`items_budget`] beside `other` (a reply's fields that come whole).
pub fn budget_beside<T: Serialize>(other: &T) -> usize {
    items_budget().saturating_sub(json_size(other))
}

/// [`page_read`] for a list where consecutive items may share a cursor key (one message's
/// copies, one per recipient): a page ends between keys, never inside one, so continuing
/// after the last key misses nothing; a first key whose items alone pass the bound comes
/// whole. (The store's read never splits a key either.)
pub fn page_grouped<T: Serialize, K: PartialEq>(read: Within<T>, key: impl Fn(&T) -> K) -> Page<T, K> {
    let (items, cut) = (read.items, read.cut);
    let (mut end, mut bytes) = (0, 0);
    while end < items.len() {
        let k = key(&items[end]);
        let group = items[end..].iter().take_while(|i| key(i) == k).count();
        let size: usize = items[end..end + group].iter().map(json_size).sum();
        if end > 0 && bytes + size > items_budget() {
            break;
        }
        bytes += size;
        end += group;
    }
    let truncated = end < items.len() || (cut && end > 0);
    let mut items = items;
    items.truncate(end);
    let next_after = if truncated { items.last().map(key) } else { None };
    Page { items, truncated, next_after }
}

/// The items after the one whose key is `after`, for a list the store returns whole and in
/// a stable order (a cursor an earlier page's `next_after` gave). A key no longer in the
/// list (its item was removed meanwhile) is refused, so nothing is silently skipped.
pub fn after_key<T>(items: Vec<T>, after: Option<&str>, key: impl Fn(&T) -> &str) -> Result<Vec<T>> {
    let Some(after) = after else { return Ok(items) };
    match items.iter().position(|i| key(i) == after) {
        Some(at) => Ok(items.into_iter().skip(at + 1).collect()),
        None => Err(gone(after)),
    }
}

/// The error for a cursor that names an item no longer in its list.
pub fn gone(after: &str) -> Error {
    Error::invalid(format!("cursor '{after}' is not in this list any more (it was removed): list again from the start"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_item_always_comes_and_the_rest_stop_at_the_bound() {
        assert_eq!(fit(vec![10, 1], 5, |w| *w), (vec![10], true));
        assert_eq!(fit(vec![2, 2, 2], 5, |w| *w), (vec![2, 2], true));
        assert_eq!(fit(vec![2, 3], 5, |w| *w), (vec![2, 3], false));
        assert_eq!(fit(Vec::<usize>::new(), 5, |w| *w), (vec![], false));
    }

    #[test]
    fn sizes_are_the_serialized_lengths() {
        let v = serde_json::json!({"a": "x\"y", "b": [1, 2]});
        assert_eq!(json_size(&v), serde_json::to_string(&v).unwrap().len());
    }

    #[test]
    fn a_cursor_continues_after_its_item_and_a_removed_one_is_refused() {
        let items = vec!["a", "b", "c"];
        assert_eq!(after_key(items.clone(), Some("a"), |s| s).unwrap(), vec!["b", "c"]);
        assert_eq!(after_key(items.clone(), None, |s| s).unwrap(), items);
        assert!(after_key(items, Some("z"), |s| s).is_err());
    }
}
