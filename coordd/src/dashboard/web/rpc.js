// A JSON-RPC 2.0 client over the dashboard's WebSocket: calls, and the
// events.subscribeBatched subscription (each notification an array of events, so a burst
// is a few messages, not one per event). The same protocol as the daemon's socket
// (docs/protocol.md).

export class Rpc {
  constructor(url) {
    this.url = url;
    this.ws = null;
    this.nextId = 1;
    this.pending = new Map();   // id -> {resolve, reject}
    this.subs = new Map();      // subscription id -> handler
    this.early = new Map();     // subscription id -> events that came before its handler
    this.onclose = () => {};
    /// Calls made, by method (what a test or a benchmark counts).
    this.counts = {};
  }

  /// Open the socket; resolves when open, rejects if it fails to open within
  /// `timeoutMs` (a port that accepts and never answers does not hold the page).
  connect(timeoutMs = 5000) {
    return new Promise((resolve, reject) => {
      const ws = new WebSocket(this.url);
      let opened = false;
      const timer = setTimeout(() => { if (!opened) ws.close(); }, timeoutMs);
      ws.onopen = () => { clearTimeout(timer); opened = true; this.ws = ws; resolve(); };
      ws.onmessage = (m) => this.receive(m.data);
      ws.onerror = () => { if (!opened) reject(new Error('cannot connect')); };
      ws.onclose = () => {
        clearTimeout(timer);
        if (!opened) { reject(new Error('cannot connect')); return; }
        this.ws = null;
        for (const p of this.pending.values()) p.reject(new Error('connection closed'));
        this.pending.clear();
        this.subs.clear();
        this.early.clear();
        this.onclose();
      };
    });
  }

  /// Give up the connection for good (no reconnect).
  close() {
    this.onclose = () => {};
    if (this.ws) this.ws.close();
  }

  receive(text) {
    let msg;
    try { msg = JSON.parse(text); } catch { return; }
    for (const m of Array.isArray(msg) ? msg : [msg]) {
      if (m.method && m.params && m.params.subscription !== undefined) {
        const key = String(m.params.subscription);
        // The daemon ended the subscription (a subscription error, or a final notice that
        // is not events): start over on a new connection, which resumes from the cursor.
        const r = m.params.result;
        const events = Array.isArray(r) ? r : [r];
        if (m.params.error !== undefined || !events.length || events.some((e) => !e || e.event_id === undefined)) {
          this.subs.delete(key);
          if (this.ws) this.ws.close();
          continue;
        }
        const h = this.subs.get(key);
        if (h) for (const e of events) h(e);
        else {
          if (!this.early.has(key)) this.early.set(key, []);
          this.early.get(key).push(...events);
        }
      } else if (m.id !== undefined && this.pending.has(m.id)) {
        const p = this.pending.get(m.id);
        this.pending.delete(m.id);
        if (m.error) {
          const e = new Error(m.error.message);
          e.code = m.error.code;
          e.data = m.error.data;
          p.reject(e);
        } else {
          p.resolve(m.result);
        }
      }
    }
  }

  call(method, params) {
    if (!this.ws) return Promise.reject(new Error('not connected'));
    this.counts[method] = (this.counts[method] || 0) + 1;
    const id = this.nextId++;
    const req = { jsonrpc: '2.0', id, method };
    if (params !== undefined) req.params = params;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.ws.send(JSON.stringify(req));
    });
  }

  /// Subscribe to events matching `filter`; `onEvent` gets each event in order.
  async subscribe(filter, onEvent) {
    const id = await this.call('events.subscribeBatched', filter);
    const key = String(id);
    this.subs.set(key, onEvent);
    for (const e of this.early.get(key) || []) onEvent(e);
    this.early.delete(key);
    return id;
  }
}
