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
