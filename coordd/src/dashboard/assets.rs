//! The page's files, embedded in the binary at build time (nothing loads from the
//! network). Plain ES modules and CSS: no build step.

/// One embedded file.
pub struct Asset {
    pub name: &'static str,
    pub content_type: &'static str,
    pub bytes: &'static [u8],
}

macro_rules! assets {
    ($($name:literal => $ty:expr),+ $(,)?) => {
        &[$(Asset { name: $name, content_type: $ty, bytes: include_bytes!(concat!("web/", $name)) }),+]
    };
}

const JS: &str = "text/javascript; charset=utf-8";

/// Every file the page uses.
pub static ASSETS: &[Asset] = assets![
    "index.html" => "text/html; charset=utf-8",
    "style.css" => "text/css; charset=utf-8",
    "app.js" => JS,
    "rpc.js" => JS,
    "dom.js" => JS,
    "graph.js" => JS,
    "runs.js" => JS,
    "agents.js" => JS,
    "agents_live.js" => JS,
    "timeline.js" => JS,
    "reservations.js" => JS,
    "control.js" => JS,
    "threads.js" => JS,
    "links.js" => JS,
    "actions.js" => JS,
    "review.js" => JS,
    "favicon.ico" => "image/x-icon",
];

/// The page's icon, which browsers also ask for at `/favicon.ico`, without the token.
pub fn favicon() -> &'static Asset {
    find("favicon.ico").expect("the icon is embedded")
}

/// The asset at `name` (a path under the token, without the leading slash).
pub fn find(name: &str) -> Option<&'static Asset> {
    ASSETS.iter().find(|a| a.name == name)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every module a script imports and every file the page links is embedded (a missing
    /// one is a 404 that leaves the page blank).
    #[test]
    fn every_file_the_page_loads_is_embedded() {
        let mut wanted = Vec::new();
        for a in ASSETS {
            let text = std::str::from_utf8(a.bytes).unwrap_or_default();
            for quote in ["from './", "href=\""] {
                for rest in text.split(quote).skip(1) {
                    let name = rest.split(['\'', '"']).next().unwrap_or_default();
                    if !name.starts_with('#') && !name.is_empty() {
                        wanted.push((a.name, name.to_string()));
                    }
                }
            }
        }
        assert!(wanted.iter().any(|(_, n)| n == "runs.js"), "{wanted:?}");
        for (by, name) in wanted {
            assert!(find(&name).is_some(), "{by} loads {name}, which is not embedded");
        }
    }
}
