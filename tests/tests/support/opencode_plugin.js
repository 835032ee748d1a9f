// coordd's opencode plugin, as the research tests (tests/tests/opencode.rs) load it: a
// prototype of what `inbox hook install --client opencode` would write (docs/clients-research.md).
//
// opencode (1.18) loads it from the `plugin` list of the project's opencode.json, as
// `["file:///abs/path/opencode_plugin.js", {inbox, db, agent, task, mcp}]`: the second element
// reaches the plugin as its second argument. For each opencode hook it runs the Claude Code
// hook handler, `inbox hook claude EVENT`, with Claude-shaped hook JSON on stdin, and turns its
// answer into what opencode can do:
//   tool.execute.before  -> pre-tool-use:  a deny throws (the model gets the reason as the
//                           tool's error); an allow with a changed input rewrites the args
//   tool.execute.after   -> post-tool-use: additionalContext is appended to the tool's output
//   chat.message         -> user-prompt-submit: additionalContext is appended to the prompt
//   event session.idle   -> stop: a block becomes a new prompt (only where the process stays,
//                           `opencode serve`: `opencode run` exits on idle)
// and a `continue: false` (a shutdown) aborts the session. It imports nothing, so opencode has
// no dependency to install for it.
import { spawnSync } from "node:child_process"

// opencode's tools as Claude Code names them, with the argument names the policy reads.
const TOOLS = {
  bash: ["Bash", (a) => ({ command: a.command })],
  edit: ["Edit", (a) => ({ file_path: a.filePath })],
  write: ["Write", (a) => ({ file_path: a.filePath })],
  read: ["Read", (a) => ({ file_path: a.filePath })],
  webfetch: ["WebFetch", (a) => ({ url: a.url })],
}

export const Coordd = async ({ client, directory }, options = {}) => {
  const hook = (event, input) => {
    const args = ["--db", options.db, "--agent", options.agent, "hook", "claude", event]
    if (options.task) args.push("--task", options.task)
    if (options.mcp) args.push("--mcp")
    const r = spawnSync(options.inbox, args, {
      input: JSON.stringify({ cwd: directory, hook_event_name: event, ...input }),
      encoding: "utf8",
    })
    try {
      return JSON.parse(r.stdout || "null")
    } catch {
      return null
    }
  }
  const claudeTool = (tool, args) => {
    const known = TOOLS[tool]
    if (known) return { tool_name: known[0], tool_input: known[1](args ?? {}) }
    // MCP tools are SERVER_TOOL in opencode, mcp__SERVER__TOOL in Claude Code.
    for (const server of options.mcpServers ?? ["coordd"]) {
      if (tool.startsWith(`${server}_`)) return { tool_name: `mcp__${server}__${tool.slice(server.length + 1)}`, tool_input: args }
    }
    return { tool_name: tool, tool_input: args }
  }
  const abort = async (sessionID, out) => {
    if (out?.continue !== false) return false
    await client.session.abort({ path: { id: sessionID } })
    return true
  }
  return {
    "tool.execute.before": async (input, output) => {
      const out = hook("pre-tool-use", { session_id: input.sessionID, tool_use_id: input.callID, ...claudeTool(input.tool, output.args) })
      if (await abort(input.sessionID, out)) throw new Error(out.stopReason ?? "stopped")
      const d = out?.hookSpecificOutput
      if (d?.permissionDecision === "deny") throw new Error(d.permissionDecisionReason)
      if (d?.updatedInput && input.tool === "bash") output.args.command = d.updatedInput.command
    },
    "tool.execute.after": async (input, output) => {
      const out = hook("post-tool-use", { session_id: input.sessionID, tool_use_id: input.callID, ...claudeTool(input.tool, input.args) })
      if (await abort(input.sessionID, out)) return
      const extra = out?.hookSpecificOutput?.additionalContext
      if (!extra) return
      // An MCP tool's output is the MCP result ({content: [...]}); a built-in tool's, a string.
      if (Array.isArray(output.content)) output.content.push({ type: "text", text: extra })
      else output.output = `${output.output ?? ""}\n\n${extra}`
    },
    "chat.message": async (input, output) => {
      const out = hook("user-prompt-submit", { session_id: input.sessionID })
      if (await abort(input.sessionID, out)) return
      const extra = out?.hookSpecificOutput?.additionalContext
      const part = output.parts.find((p) => p.type === "text")
      if (extra && part) part.text = `${part.text}\n\n${extra}`
    },
    event: async ({ event }) => {
      if (event.type !== "session.idle") return
      const id = event.properties.sessionID
      const out = hook("stop", { session_id: id })
      if (out?.decision !== "block") return
      await client.session.promptAsync({ path: { id }, body: { parts: [{ type: "text", text: out.reason }] } })
    },
  }
}
