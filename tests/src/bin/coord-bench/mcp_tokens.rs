//! `--only mcp-tokens`: the size of the two MCP tool sets (`inbox mcp`, a worker's, and
//! `orch mcp`, the lead's) as a model receives them, in tokens of the public o200k and
//! cl100k encodings, beside issue 35's aim of at most 3,000 for the lead's.

use coord_tests::Project;
use coord_tests::mcp_client::{session, tool_set_tokens};

use crate::report;

pub async fn run(p: &Project) {
    let sets = [
        ("inbox mcp (a worker's tools)", p.inbox().args(["--agent", "bench-worker", "mcp"]).into_command()),
        ("orch mcp (the lead's tools)", p.orch().args(["mcp", "--as", "bench-lead"]).into_command()),
    ];
    for (name, cmd) in sets {
        let s = tool_set_tokens(&session(cmd).await).await;
        report(
            &format!("{name}: tokens o200k / cl100k (aim <= 3000 for the lead)"),
            format!("{} / {} ({} tools, {} bytes)", s.o200k, s.cl100k, s.tools, s.bytes),
        );
    }
}
