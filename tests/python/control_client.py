#!/usr/bin/env python3
"""A coordd client in plain Python (standard library only), written from docs/protocol.md:
typed control messages, requests, the policy and progress over the raw socket.

Usage: control_client.py SOCKET_PATH     Prints "ok" and exits 0 when every check passes.
"""
import json
import socket
import sys

SAMPLES = [  # (type, sender, recipient or None for an answer, payload); requests before answers
    ("permission_request", "w1", "lead", {"request_id": "py-perm", "tool_name": "Bash", "tool_use_id": "toolu_py",
                                          "description": "push", "input": {"command": "git push"}}),
    ("plan_approval_request", "w1", "lead", {"request_id": "py-plan", "plan": "1. test\n2. ship"}),
    ("shutdown_request", "lead", "w1", {"request_id": "py-stop", "reason": "done"}),
    ("shutdown_request", "lead", "w1", {"request_id": "py-stop-2"}),
    ("idle_notification", "w1", "lead", {"idle_reason": "interrupted", "summary": "paused"}),
    ("task_assignment", "lead", "w1", {"task_id": "T7", "subject": "Write docs", "description": "", "assigned_by": "lead"}),
    ("mode_set_request", "lead", "w1", {"mode": "acceptEdits"}),
    ("team_permission_update", "lead", "w1", {"rules": ["Write(src/**)"], "behavior": "ask"}),
    ("a_type_from_the_future", "lead", "w1", {"anything": [1, {"x": None}], "ünïcode": "✓"}),
    ("permission_response", "lead", None, {"request_id": "py-perm", "approved": True,
                                           "updated_input": {"command": "git push --dry-run"}}),
    ("plan_approval_response", "lead", None, {"request_id": "py-plan", "approved": True, "feedback": "go"}),
    ("shutdown_approved", "w1", None, {"request_id": "py-stop"}),
    ("shutdown_rejected", "w1", None, {"request_id": "py-stop-2", "reason": "busy"}),
]
# Approving a shutdown makes the daemon itself tell the lead the worker stopped.
DAEMONS_OWN = 1


def mine(m):
    """A message as its sender wrote it: without the expiry the daemon adds to a shutdown
    request; None for the daemon's own idle notification (reason `shutdown`)."""
    payload = dict(m["payload_json"])
    if m["type"] == "idle_notification" and payload.get("idle_reason") == "shutdown":
        return None
    if m["type"] == "shutdown_request":
        payload.pop("expires_at", None)
    return (m["type"], payload)


class Conn:
    def __init__(self, path):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.connect(path)
        self.file = self.sock.makefile("rb")
        self.next_id = 0
        self.notes = []  # notifications that arrived while waiting for a reply

    def send(self, obj):
        self.sock.sendall(json.dumps(obj).encode() + b"\n")

    def read(self):
        line = self.file.readline()
        assert line, "the daemon closed the connection"
        return json.loads(line)

    def call(self, method, params=None):
        self.next_id += 1
        req = {"jsonrpc": "2.0", "id": self.next_id, "method": method}
        if params is not None:
            req["params"] = params
        self.send(req)
        while True:
            msg = self.read()
            if msg.get("id") == self.next_id:
                if "error" in msg:
                    raise RuntimeError(f"{method}: {msg['error']}")
                return msg["result"]
            self.notes.append(msg)

    def notification(self, method):
        while True:
            if self.notes:
                msg = self.notes.pop(0)
            else:
                msg = self.read()
            if msg.get("method") == method:
                return msg["params"]


def main(path):
    c = Conn(path)
    hello = c.call("system.hello")
    for m in ["control.send", "control.requests", "policy.set", "progress.subscribe"]:
        assert m in hello["methods"], m
    start = hello["last_event_id"]
    # Subscriptions first: every typed message to lead and to w1 after the cursor.
    subs = {who: c.call("events.subscribe", {"after_event": start, "to": who, "message_types": ["*"]})
            for who in ("lead", "w1")}
    by_sub = {v: k for k, v in subs.items()}
    for t, sender, to, payload in SAMPLES:
        params = {"from": sender, "type": t, "payload": payload}
        if to:
            params["to"] = to
        r = c.call("control.send", params)
        assert mine(r["message"]) == (t, payload), r
    received = {"lead": [], "w1": []}
    for _ in range(len(SAMPLES) + DAEMONS_OWN):
        note = c.notification("events.event")
        m = mine(note["result"]["message"])
        if m:
            received[by_sub[note["subscription"]]].append(m)
    for who in received:
        want = [(t, p) for t, s, to, p in SAMPLES if (to or ("w1" if s == "lead" else "lead")) == who]
        assert received[who] == want, (who, received[who], want)
    # The store agrees, and events.list selects by type.
    listed = c.call("events.list", {"after_event": start, "message_types": ["*"], "limit": 100})["events"]
    assert [m for m in (mine(e["message"]) for e in listed) if m] == [(t, p) for t, _, _, p in SAMPLES]
    only = c.call("events.list", {"after_event": start, "message_types": ["idle_notification"]})["events"]
    assert [e["message"]["payload_json"]["idle_reason"] for e in only] == ["interrupted", "shutdown"]
    # Requests: all answered, each with its answer.
    reqs = c.call("control.requests", {"include_closed": True})["requests"]
    assert sorted(r["request_id"] for r in reqs) == ["py-perm", "py-plan", "py-stop", "py-stop-2"], reqs
    assert all(r["status"] == "answered" and r["response"] for r in reqs), reqs
    assert c.call("control.requests", {})["requests"] == []
    # The policy, and a check against it.
    pol = c.call("policy.set", {"actor": "lead", "policy": {"lead": "lead", "rules": [{"tool": "Bash(git push*)"}]}})
    assert pol["policy"]["version"] >= 1 and pol["file"].endswith("policy.json"), pol
    chk = c.call("policy.check", {"agent": "w1", "tool_name": "Bash", "tool_input": {"command": "git push -f"}})
    assert chk["gated"] and chk["approver"] == "lead", chk
    # Progress: a subscription, a fire-and-forget notification from "a tool", the line arrives.
    psub = c.call("progress.subscribe", {"agent": "w1"})
    tool = Conn(path)
    tool.send({"jsonrpc": "2.0", "method": "progress.report",
               "params": {"agent": "w1", "type": "log", "tool_use_id": "toolu_py", "data": "50% done"}})
    line = c.notification("progress.line")["result"]
    assert line["data"] == "50% done" and line["type"] == "log" and line["tool_use_id"] == "toolu_py", line
    c.call("progress.unsubscribe", [psub])
    print("ok")


if __name__ == "__main__":
    main(sys.argv[1])
