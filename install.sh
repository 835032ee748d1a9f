#!/usr/bin/env bash
# Install coordd, inbox and orch from this checkout with `cargo install` (into ~/.cargo/bin,
# or $CARGO_INSTALL_ROOT/bin), sharing one build directory so each crate is compiled once.
# Re-run it to upgrade; then `coordd stop` in a project restarts its daemon on the new build
# at the next call.
set -euo pipefail
cd "$(dirname "$0")"
for crate in coordd inbox-cli orch-cli; do
    cargo install --locked --quiet --force --target-dir target/install --path "$crate"
done
bin="${CARGO_INSTALL_ROOT:-${CARGO_HOME:-$HOME/.cargo}}/bin"
echo "installed coordd, inbox and orch into $bin"
case ":$PATH:" in
    *":$bin:"*) ;;
    *) echo "note: $bin is not on your PATH; add it (export PATH=\"$bin:\$PATH\") to run them by name" ;;
esac
