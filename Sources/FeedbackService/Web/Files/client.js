/* FeedbackHost client: open a session's stream, keep its latest state, post its events. */
(function (global) {
  "use strict";

  /** An HTTP error answered with application/problem+json (status 0: no answer reached us). */
  class ProblemError extends Error {
    constructor(status, problem) {
      super((problem && (problem.detail || problem.title)) || "HTTP " + status);
      this.name = "ProblemError";
      this.status = status;
      this.problem = problem || null;
    }
  }

  async function request(method, url, body, headers, token) {
    const init = { method, headers: Object.assign({ Accept: "application/json" }, headers || {}) };
    if (token) init.headers.Authorization = "Bearer " + token;
    if (body !== undefined) {
      init.headers["Content-Type"] = "application/json";
      init.body = JSON.stringify(body);
    }
    let response;
    try {
      response = await fetch(url, init);
    } catch (error) {
      throw new ProblemError(0, { title: "No answer from the server", detail: String(error) });
    }
    const type = response.headers.get("Content-Type") || "";
    const data = type.includes("json") ? await response.json().catch(() => null) : null;
    if (!response.ok) throw new ProblemError(response.status, data || { title: response.statusText });
    return data;
  }

  // RFC 6901 pointers and RFC 6902 patches, applied in place.
  function parsePointer(pointer) {
    if (pointer === "") return [];
    if (typeof pointer !== "string" || pointer[0] !== "/") throw new Error("not a JSON pointer: " + pointer);
    return pointer.slice(1).split("/").map((t) => t.replace(/~1/g, "/").replace(/~0/g, "~"));
  }

  function arrayIndex(token, limit) {
    if (!/^(0|[1-9][0-9]*)$/.test(token) || Number(token) > limit) throw new Error("bad array index " + token);
    return Number(token);
  }

  function resolve(doc, tokens) {
    let node = doc;
    for (const token of tokens) {
      if (Array.isArray(node)) node = node[arrayIndex(token, node.length - 1)];
      else if (node !== null && typeof node === "object" && Object.hasOwn(node, token)) node = node[token];
      else throw new Error("no value at /" + tokens.join("/"));
    }
    return node;
  }

  function put(doc, tokens, value, insert) {
    if (tokens.length === 0) return value;
    const parent = resolve(doc, tokens.slice(0, -1));
    const key = tokens[tokens.length - 1];
    if (Array.isArray(parent)) {
      if (insert) parent.splice(key === "-" ? parent.length : arrayIndex(key, parent.length), 0, value);
      else parent[arrayIndex(key, parent.length - 1)] = value;
    } else if (parent !== null && typeof parent === "object") {
      if (!insert && !Object.hasOwn(parent, key)) throw new Error("no member " + key + " to replace");
      Object.defineProperty(parent, key, { value, writable: true, enumerable: true, configurable: true });
    } else {
      throw new Error("cannot add below a scalar");
    }
    return doc;
  }

  function removeAt(doc, tokens) {
    if (tokens.length === 0) throw new Error("cannot remove the root");
    const parent = resolve(doc, tokens.slice(0, -1));
    const key = tokens[tokens.length - 1];
    if (Array.isArray(parent)) parent.splice(arrayIndex(key, parent.length - 1), 1);
    else if (parent !== null && typeof parent === "object" && Object.hasOwn(parent, key)) delete parent[key];
    else throw new Error("no member " + key + " to remove");
    return doc;
  }

  function equal(a, b) {
    return JSON.stringify(canonical(a)) === JSON.stringify(canonical(b));
  }

  function canonical(v) {
    if (Array.isArray(v)) return v.map(canonical);
    if (v === null || typeof v !== "object") return v;
    return Object.keys(v).sort().map((k) => [k, canonical(v[k])]);
  }

  /** Applies RFC 6902 `ops` to `doc` in place and returns the new document; throws when an op fails. */
  function applyPatch(doc, ops) {
    for (const op of ops) {
      const path = parsePointer(op.path);
      switch (op.op) {
        case "add": doc = put(doc, path, op.value, true); break;
        case "replace": doc = put(doc, path, op.value, false); break;
        case "remove": doc = removeAt(doc, path); break;
        case "copy": doc = put(doc, path, structuredClone(resolve(doc, parsePointer(op.from))), true); break;
        case "move": {
          const from = parsePointer(op.from);
          const value = resolve(doc, from);
          doc = put(removeAt(doc, from), path, value, true);
          break;
        }
        case "test":
          if (!equal(resolve(doc, path), op.value)) throw new Error("test failed at " + op.path);
          break;
        default: throw new Error("unknown patch op " + op.op);
      }
    }
    return doc;
  }

  /**
   * One session watched over its stream. Status: "connecting", "live", "reconnecting", "ended", "closed".
   * Callbacks (all optional): onState(state, rev), onStatus(status), onEnded(reason), onError(error), and
   * onPatch({base, rev, ops}) for each patch applied (before the onState it leads to).
   * `state` is updated in place by patches: treat it as read-only.
   */
  class Session {
    constructor(id, options) {
      const o = options || {};
      this.id = id;
      this.base = o.base || "";
      this.mode = o.mode === "snapshot" ? "snapshot" : "patch";
      this.select = o.select || [];
      this.recreate = o.recreate || null;
      this.backoff = Object.assign({ initialMs: 500, maxMs: 15000 }, o.backoff || {});
      this.callbacks = o;
      this.state = undefined;
      this.rev = -1;
      this.cursor = null;
      this.status = "connecting";
      this.source = null;
      this.timer = null;
      this.failures = 0;
      this.gaps = 0;
      this.generation = 0;
      // With `--auth jwt`: a token (a string), or a function that gives one (or a promise of one), asked again
      // when the stream's token expires (`reauth`) or is refused.
      this.tokenSource = typeof o.token === "function" ? o.token : null;
      this.token = typeof o.token === "string" ? o.token : null;
      if (this.tokenSource) this.renew(null);
      else this.connect(null);
    }

    get url() { return this.base + "/v1/sessions/" + encodeURIComponent(this.id); }

    /** Posts one event or an array of events; resolves with {rev, cursor, state}, rejects with ProblemError. */
    send(events, headers) {
      const body = Array.isArray(events) ? { events } : events;
      return request("POST", this.url + "/events", body, headers, this.token).catch((error) => {
        this.emit("onError", error);
        throw error;
      });
    }

    /** Drops the stream and opens a new one that starts from a snapshot. */
    reconnect() {
      this.stop();
      this.failures = 0;
      this.connect(null);
    }

    /** Stops watching; the session itself goes on. */
    close() {
      this.stop();
      this.setStatus("closed");
    }

    /** Ends the session on the server (DELETE) and stops watching. */
    async delete() {
      this.close();
      await request("DELETE", this.url, undefined, undefined, this.token);
    }

    stop() {
      this.generation += 1;
      clearTimeout(this.timer);
      this.timer = null;
      if (this.source) this.source.close();
      this.source = null;
    }

    connect(lastEventId) {
      const query = new URLSearchParams();
      if (this.mode === "patch") query.set("mode", "patch");
      for (const pointer of this.select) query.append("select", pointer);
      if (lastEventId) query.set("lastEventId", lastEventId);
      if (this.token) query.set("access_token", this.token);
      const text = query.toString();
      const source = new EventSource(this.url + "/stream" + (text ? "?" + text : ""));
      this.source = source;
      this.setStatus(this.rev < 0 && this.status === "connecting" ? "connecting" : "reconnecting");
      const mine = (handler) => (event) => { if (this.source === source) handler.call(this, event); };
      source.onopen = mine(() => this.setStatus("live"));
      source.addEventListener("snapshot", mine(this.onSnapshot));
      source.addEventListener("patch", mine(this.onPatch));
      source.addEventListener("ended", mine(this.onEnded));
      source.addEventListener("reauth", mine(this.onReauth));
      source.onerror = mine(() => {
        // CONNECTING: the browser retries by itself after the server's `retry:`. CLOSED: it gave up.
        if (source.readyState === EventSource.CLOSED) this.retryLater();
        else this.setStatus("reconnecting");
      });
    }

    onSnapshot(event) {
      const data = JSON.parse(event.data);
      this.failures = 0;
      this.setStatus("live");
      this.accept(this.select.length ? data.select : data.state, data.rev, event.lastEventId);
    }

    onPatch(event) {
      const data = JSON.parse(event.data);
      this.failures = 0;
      if (data.base !== this.rev) return this.resync("gap: at rev " + this.rev + ", patch from " + data.base);
      let state;
      try {
        state = applyPatch(this.state, data.ops);
      } catch (error) {
        return this.resync("patch failed: " + error.message);
      }
      this.gaps = 0;
      this.emit("onPatch", data);
      this.accept(state, data.rev, event.lastEventId);
    }

    onEnded(event) {
      const reason = (JSON.parse(event.data || "{}").reason) || "ended";
      this.stop();
      this.setStatus("ended");
      this.emit("onEnded", reason);
    }

    /** The stream's token expired (or was revoked): resume with a fresh one, or end without a way to get one. */
    onReauth() {
      this.stop();
      if (this.tokenSource) {
        this.setStatus("reconnecting");
        this.renew(this.cursor);
      } else {
        this.setStatus("ended");
        this.emit("onEnded", "token-expired");
      }
    }

    /** Asks the token source for a token, then connects (unless a stop came meanwhile). */
    async renew(lastEventId) {
      const generation = this.generation;
      try {
        this.token = await this.tokenSource(this);
      } catch (error) {
        this.emit("onError", error);
        if (generation === this.generation) this.retryLater();
        return;
      }
      if (generation === this.generation) this.connect(lastEventId);
    }

    accept(state, rev, cursor) {
      this.state = state;
      this.rev = rev;
      if (cursor) this.cursor = cursor;
      this.emit("onState", state, rev);
    }

    /** A gap or a patch that does not apply: start over from a snapshot (quickly at first). */
    resync(why) {
      this.emit("onError", new Error("re-syncing: " + why));
      this.stop();
      const delay = this.gaps === 0 ? 0 : this.delay(this.gaps);
      this.gaps += 1;
      this.setStatus("reconnecting");
      this.timer = setTimeout(() => this.connect(null), delay);
    }

    delay(attempt) {
      const ms = Math.min(this.backoff.maxMs, this.backoff.initialMs * 2 ** Math.min(attempt, 16));
      return ms / 2 + Math.random() * (ms / 2);
    }

    /** EventSource gave up (an error status, or the server is gone): back off, look, then reconnect. */
    retryLater() {
      this.stop();
      this.setStatus("reconnecting");
      const delay = this.delay(this.failures);
      this.failures += 1;
      this.timer = setTimeout(() => this.probe(), delay);
    }

    /** Between a stop and the next connect; a later stop (reconnect, close) makes it stand down. */
    async probe() {
      this.timer = null;
      const generation = this.generation;
      const current = () => generation === this.generation;
      try {
        await request("GET", this.url, undefined, undefined, this.token);
      } catch (error) {
        if (!current()) return;
        if (error.status === 401 && this.tokenSource) {
          this.emit("onError", error);
          this.renew(this.cursor);
        } else if (error.status === 401 || error.status === 403) {
          this.setStatus("ended");
          this.emit("onEnded", error.status === 401 ? "unauthorized" : "forbidden");
        } else if (error.status === 404 && this.recreate) {
          try {
            const id = await this.recreate(this);
            if (!current()) return;
            if (id) this.id = id;
            this.rev = -1;
            this.cursor = null;
            this.connect(null);
          } catch (failure) {
            this.emit("onError", failure);
            if (current()) this.retryLater();
          }
        } else if (error.status === 404) {
          this.setStatus("ended");
          this.emit("onEnded", "not-found");
        } else {
          this.emit("onError", error);
          this.retryLater();
        }
        return;
      }
      if (current()) this.connect(this.cursor);
    }

    setStatus(status) {
      if (this.status === status) return;
      this.status = status;
      this.emit("onStatus", status);
    }

    emit(name, ...args) {
      const callback = this.callbacks[name];
      if (typeof callback === "function") {
        try { callback(...args); } catch (error) { console.error(error); }
      }
    }
  }

  const sessionPath = (base, id) => (base || "") + "/v1/sessions/" + encodeURIComponent(id);
  const query = (values) => {
    const text = new URLSearchParams(Object.entries(values || {}).filter(([, v]) => v !== undefined && v !== null &&
      v !== "")).toString();
    return text ? "?" + text : "";
  };

  /**
   * The inspection routes (docs/API.md, "Inspecting sessions"; `--inspector on`, the `inspect` scope), and forks.
   * Each takes an optional `token` (`--auth jwt`) and `base` (another origin), and rejects with ProblemError.
   */
  const inspect = {
    /** GET /v1/sessions?system=&status=&cursor=&limit=: `{sessions, next, counts}`. */
    sessions: (filters, token, base) => request("GET", (base || "") + "/v1/sessions" + query(filters), undefined,
      undefined, token),
    /** GET …/history?after=&before=&limit=&origin=&type=: `{keptFrom, head, entries, next}`. */
    history: (id, page, token, base) => request("GET", sessionPath(base, id) + "/history" + query(page), undefined,
      undefined, token),
    /** GET …/states/{rev}: `{rev, state}`, the state right after `rev`. */
    state: (id, rev, token, base) => request("GET", sessionPath(base, id) + "/states/" + rev, undefined, undefined,
      token),
    /** GET …/diff?from=&to=: `{from, to, patch}`. */
    diff: (id, from, to, token, base) => request("GET", sessionPath(base, id) + "/diff" + query({ from, to }),
      undefined, undefined, token),
    /** POST …/forks {"rev"}: a new session at that revision, answered as a create plus `forkOf`; effects paused. */
    fork: (id, rev, token, base) => request("POST", sessionPath(base, id) + "/forks", { rev }, undefined, token),
    /** POST …/effects/resume (no body): a fork's paused effects (or a runaway's stopped feedbacks) start. */
    resumeEffects: (id, token, base) => request("POST", sessionPath(base, id) + "/effects/resume", undefined,
      undefined, token),
    /** GET …/containment: `{feedbacks: "running" | "stopped" | "paused", …}`. */
    containment: (id, token, base) => request("GET", sessionPath(base, id) + "/containment", undefined, undefined,
      token),
  };

  global.FeedbackHost = {
    ProblemError,
    applyPatch,
    inspect,
    /** Opens a session's stream; see Session. */
    open: (id, options) => new Session(id, options),
    /** The systems the server runs (GET /v1/systems). */
    systems: async (base) => (await request("GET", (base || "") + "/v1/systems")).systems,
    /**
     * Creates a session of `system` (POST), or with a chosen id (PUT) when `options.id` is given; `options.token`
     * is a create token (`--auth jwt`). With a server key the answer carries the session's `tokens`.
     */
    create: (system, options) => {
      const o = options || {};
      const body = o.state === undefined ? { system } : { system, state: o.state };
      const base = (o.base || "") + "/v1/sessions";
      return o.id
        ? request("PUT", base + "/" + encodeURIComponent(o.id), body, undefined, o.token)
        : request("POST", base, body, undefined, o.token);
    },
    /** The session's latest snapshot (GET); `token` with `--auth jwt`. */
    snapshot: (id, base, token) =>
      request("GET", (base || "") + "/v1/sessions/" + encodeURIComponent(id), undefined, undefined, token),
  };
})(globalThis);
