// coordd's opencode plugin, written by `inbox hook install --client opencode` (and orch
// dispatch) beside the project's database and named in the worktree's opencode.json as
// `["file:///…/coordd-opencode-plugin.js", {inbox, db, agent, task, run, mcp}]`: the options
// say who the session is, so this one file serves every worktree. It imports nothing, so
// opencode installs nothing for it.
//
// For each opencode hook it runs the mailbox hook handler,
// `inbox hook claude EVENT --client opencode`, with the hook's JSON on stdin (opencode's own
// tool names and arguments: the handler maps them), and applies the answer:
//   tool.execute.before  -> pre-tool-use:  a deny throws (the model gets the reason as the
//                           tool's error); an allow with a changed command rewrites it
//   tool.execute.after   -> post-tool-use: the reminder is appended to the tool's output
//   chat.message         -> user-prompt-submit: queued mail is appended to the prompt
//   event session.idle   -> stop: a block becomes a new prompt (where the process stays,
//                           `opencode serve`; `opencode run` exits on idle)
// A `continue: false` (a shutdown) aborts the session.
import { spawnSync } from "node:child_process"

export const Coordd = async ({ client, directory }, options = {}) => {
  const hook = (event, input) => {
    const args = ["--db", options.db, "--agent", options.agent, "hook", "claude", event, "--client", "opencode"]
    if (options.task) args.push("--task", options.task)
    if (options.run) args.push("--run", options.run)
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
  const abort = async (sessionID, out) => {
    if (out?.continue !== false) return false
    await client.session.abort({ path: { id: sessionID } })
    return true
  }
  const call = (input, args) => ({ session_id: input.sessionID, tool_use_id: input.callID, tool_name: input.tool, tool_input: args ?? {} })
  return {
    "tool.execute.before": async (input, output) => {
      const out = hook("pre-tool-use", call(input, output.args))
      if (await abort(input.sessionID, out)) throw new Error(out.stopReason ?? "stopped")
      const d = out?.hookSpecificOutput
      if (d?.permissionDecision === "deny") throw new Error(d.permissionDecisionReason)
      if (d?.updatedInput?.command && input.tool === "bash") output.args.command = d.updatedInput.command
    },
    "tool.execute.after": async (input, output) => {
      const out = hook("post-tool-use", call(input, input.args))
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
