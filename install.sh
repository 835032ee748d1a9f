#!/usr/bin/env bash
# Install coordd, inbox, orch and coord-launch from this checkout with `cargo install` (into ~/.cargo/bin,
# or $CARGO_INSTALL_ROOT/bin), building in the workspace's own target directory so they
# share their dependencies (and reuse a `cargo build --release`).
# Re-run it to upgrade; then `coordd stop` in a project restarts its daemon on the new build
# at the next call.
set -euo pipefail
cd "$(dirname "$0")"
for crate in coordd inbox-cli orch-cli launch; do
    echo "installing $crate..."
    cargo install --locked --force --target-dir "${CARGO_TARGET_DIR:-target}" --path "$crate"
done
bin="${CARGO_INSTALL_ROOT:-${CARGO_HOME:-$HOME/.cargo}}/bin"
echo "installed coordd, inbox, orch and coord-launch into $bin"
case ":$PATH:" in
    *":$bin:"*) ;;
    *) echo "note: $bin is not on your PATH; add it (export PATH=\"$bin:\$PATH\") to run them by name" ;;
esac
