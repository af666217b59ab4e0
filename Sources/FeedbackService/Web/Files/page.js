(function () {
  "use strict";
  const $ = (id) => document.getElementById(id);
  const labels = { connecting: "connecting…", live: "live", reconnecting: "reconnecting…", ended: "ended",
    closed: "closed", idle: "no session" };
  let systems = [];
  let current = null;
  let attaching = 0;

  // The inspector (issue 32) and the list of sessions: hidden for good once the server says it has no inspector.
  let inspecting = true;
  const unavailable = () => {
    inspecting = false;
    inspector.close();
    $("sessions").hidden = true;
  };
  const inspector = new Inspector({
    token: (id) => strongestToken(id),
    forked: (created) => {
      keepTokens(created.id, created.tokens);
      sessions.load();
    },
    unavailable,
  });
  const sessions = new SessionList({
    token: () => (current ? strongestToken(current.session.id) : undefined),
    current: () => (current ? current.session.id : null),
    forkOf: (id) => inspector.forks.get(id),
    unavailable,
  });

  function setBadge(status) {
    const badge = $("connection");
    badge.dataset.status = status;
    badge.textContent = labels[status] || status;
  }

  function showError(error, source) {
    const box = $("error");
    if (!error) { box.hidden = true; box.textContent = ""; return; }
    box.dataset.source = source || "page";
    const problem = error.problem;
    box.textContent = (problem && problem.title ? problem.title + ": " : "") + error.message;
    box.hidden = false;
  }

  function notice(text) {
    $("notice").textContent = text || "";
    $("notice").hidden = !text;
  }

  // With tokens on (docs/API.md, "Tokens"), a session's tokens: those its creation answered, kept for this tab in
  // sessionStorage, or a read token from a viewer's link (#ID&token=…; a fragment never reaches a server or a log).
  const tokenKey = (id) => "feedbackhost-tokens:" + id;

  function keepTokens(id, tokens) {
    if (tokens) sessionStorage.setItem(tokenKey(id), JSON.stringify(tokens));
  }

  function strongestToken(id, linkToken) {
    const kept = JSON.parse(sessionStorage.getItem(tokenKey(id)) || "{}");
    return kept.admin || kept.post || kept.read || linkToken || undefined;
  }

  function showViewerLink(id) {
    const kept = JSON.parse(sessionStorage.getItem(tokenKey(id)) || "{}");
    $("viewer").hidden = !kept.read;
    if (!kept.read) return;
    const link = location.origin + location.pathname + "#" + id + "&token=" + encodeURIComponent(kept.read);
    $("viewer-link").href = link;
    $("viewer-link").textContent = link.length > 60 ? link.slice(0, 60) + "…" : link;
  }

  /** `#ID` or `#ID&token=TOKEN` → [id, token]. */
  function fromHash() {
    const [id, query] = location.hash.slice(1).split("&", 2);
    const token = query && query.startsWith("token=") ? decodeURIComponent(query.slice(6)) : undefined;
    return [id, token];
  }

  function send(event) {
    if (!current) return Promise.resolve();
    return current.session.send(event).then(() => showError(null), showError);
  }

  function renderSystems() {
    const list = $("systems");
    list.replaceChildren(...systems.map((system) => {
      const button = el("button", { type: "button", class: "primary", id: "start-" + system.name }, "Start");
      button.addEventListener("click", () => start(system.name));
      return el("li", { "data-system": system.name }, el("div", { class: "name" }, system.name),
        el("p", {}, system.description), button);
    }));
  }

  async function loadSystems() {
    try {
      systems = await FeedbackHost.systems();
    } catch (error) {
      $("systems").replaceChildren(el("li", { class: "error" }, "Cannot list systems: " + error.message));
      setTimeout(loadSystems, 2000);
      return;
    }
    renderSystems();
    sessions.setSystems(systems);
    if (location.hash.length > 1) attach(...fromHash());
    else sessions.load();
  }

  async function start(name) {
    try {
      const created = await FeedbackHost.create(name);
      keepTokens(created.id, created.tokens);
      location.hash = created.id;
    } catch (error) {
      $("session").hidden = false;
      showError(error);
    }
  }

  function detach() {
    if (current) current.session.close();
    current = null;
    inspector.close();
    setBadge("idle");
    notice(null);
    showError(null);
  }

  /** After a restart the server may no longer know the session: make it again (same id when it can). */
  async function recreate(session) {
    if (!current || current.session !== session) return null;
    const name = current.system.name;
    let created;
    try {
      created = await FeedbackHost.create(name, { id: session.id });
    } catch (error) {
      if (error.status !== 404 && error.status !== 405) throw error;
      created = await FeedbackHost.create(name);
    }
    keepTokens(created.id, created.tokens);
    if (created.tokens) session.token = strongestToken(created.id);
    history.replaceState(null, "", "#" + created.id);
    $("session-id").textContent = created.id;
    if (inspecting) inspector.inspect(created.id, created);
    notice("The server no longer had session " + session.id + " (restarted?): " + (created.id === session.id
      ? "made it again, from its initial state." : "continuing with a new " + name + " session."));
    return created.id;
  }

  async function attach(id, linkToken) {
    detach();
    const token = ++attaching;
    const credential = strongestToken(id, linkToken);
    let snapshot;
    try {
      snapshot = await FeedbackHost.snapshot(id, undefined, credential);
    } catch (error) {
      if (token !== attaching) return;
      if (error.status === 404) history.replaceState(null, "", location.pathname);
      $("session").hidden = false;
      showError(error);
      return;
    }
    if (token !== attaching) return; // another session was picked meanwhile
    const system = systems.find((s) => s.name === snapshot.system);
    if (!system) return showError(new Error("unknown system " + snapshot.system));
    for (const li of $("systems").children) li.classList.toggle("active", li.dataset.system === system.name);
    $("session").hidden = false;
    $("session-system").textContent = system.name;
    $("session-id").textContent = snapshot.id;
    $("session-rev").textContent = snapshot.rev;
    showViewerLink(snapshot.id);
    renderExamples(system);
    const factory = pageViews[system.name];
    const view = factory ? factory(send, system) : null;
    $("view").replaceChildren(...(view ? [view.element] : []));
    const render = (state, rev) => {
      $("session-rev").textContent = rev;
      $("state-json").textContent = JSON.stringify(state, null, 2);
      if (view) view.update(state);
    };
    render(snapshot.state, snapshot.rev);
    const session = FeedbackHost.open(snapshot.id, {
      mode: "patch",
      token: credential,
      recreate,
      onState: (state, rev) => {
        render(state, rev);
        inspector.live(state, rev);
      },
      onPatch: (patch) => inspector.patch(patch),
      onStatus: (status) => {
        setBadge(status);
        if (status === "live" && $("error").dataset.source === "stream") showError(null);
      },
      onEnded: (reason) => {
        notice("The session ended (" + reason + "). Start another one.");
        inspector.ended(reason);
        if (inspecting) sessions.load();
      },
      onError: (error) => {
        if (error instanceof FeedbackHost.ProblemError) showError(error, "stream");
      },
    });
    current = { system, session, view };
    setBadge(session.status);
    if (inspecting) {
      inspector.inspect(snapshot.id, snapshot);
      sessions.load();
    }
  }

  function renderExamples(system) {
    const examples = system.exampleEvents || [];
    $("examples").replaceChildren(...examples.map((example, index) => {
      const fields = Object.keys(example).filter((k) => k !== "type").map((k) => k + ": " +
        JSON.stringify(example[k]));
      const button = el("button", { type: "button", id: "example-" + index },
        example.type + (fields.length ? " (" + fields.join(", ") + ")" : ""));
      button.addEventListener("click", () => send(example));
      return button;
    }));
    const select = $("event-type");
    select.replaceChildren(...(system.clientEvents || []).map((type) => el("option", { value: type }, type)));
    const fill = () => {
      const example = examples.find((e) => e.type === select.value) || { type: select.value };
      $("event-json").value = JSON.stringify(example);
      renderFields((system.eventSchemas || {})[select.value], example);
    };
    select.onchange = fill;
    fill();
  }

  // One input per field of the selected event type, built from its published JSON Schema (any system's, a user's
  // included): numbers, text, true/false, a choice for an enum, JSON for the rest. Each edit rewrites the JSON field,
  // which stays what is sent.
  function renderFields(schema, example) {
    const properties = (schema && schema.properties) || {};
    const required = new Set((schema && schema.required) || []);
    const names = Object.keys(properties).filter((name) => name !== "type");
    $("event-fields").replaceChildren(...names.map((name) => {
      const field = properties[name];
      const kind = field.type || ((field.anyOf || []).map((s) => s.type).find((t) => t && t !== "null"));
      const id = "event-field-" + name;
      let input;
      if (Array.isArray(field.enum)) {
        input = el("select", { id }, ...field.enum.map((v) => el("option", { value: JSON.stringify(v) }, String(v))));
      } else if (kind === "boolean") {
        input = el("input", { id, type: "checkbox" });
      } else {
        input = el("input", { id, type: kind === "integer" || kind === "number" ? "number" : "text",
          placeholder: kind === "string" ? "" : kind || "JSON", spellcheck: "false" });
      }
      const current = example[name];
      if (current !== undefined) {
        if (input.type === "checkbox") input.checked = current === true;
        else input.value = Array.isArray(field.enum) || (kind !== "string" && input.type === "text")
          ? JSON.stringify(current) : String(current);
      }
      const update = () => {
        let event;
        try { event = JSON.parse($("event-json").value); } catch { event = { type: $("event-type").value }; }
        let value;
        if (input.type === "checkbox") value = input.checked;
        else if (Array.isArray(field.enum)) value = JSON.parse(input.value);
        else if (input.type === "number") value = input.value === "" ? undefined : Number(input.value);
        else if (kind === "string") value = input.value;
        else { try { value = input.value === "" ? undefined : JSON.parse(input.value); } catch { value = input.value; } }
        if (value === undefined && !required.has(name)) delete event[name]; else event[name] = value;
        $("event-json").value = JSON.stringify(event);
      };
      input.addEventListener("input", update);
      input.addEventListener("change", update);
      return el("label", { class: "event-field" }, name + " ", input);
    }));
  }

  $("custom-event").addEventListener("submit", (submit) => {
    submit.preventDefault();
    let event;
    try {
      event = JSON.parse($("event-json").value);
    } catch (error) {
      return showError(new Error("not JSON: " + error.message));
    }
    send(event);
  });
  $("reconnect").addEventListener("click", () => { if (current) current.session.reconnect(); });
  $("end-session").addEventListener("click", async () => {
    if (!current) return;
    const session = current.session;
    detach();
    await session.delete().catch(showError);
    history.replaceState(null, "", location.pathname);
    $("session").hidden = true;
    for (const li of $("systems").children) li.classList.remove("active");
    if (inspecting) sessions.load();
  });
  window.addEventListener("hashchange", () => {
    const [id, linkToken] = fromHash();
    if (id && (!current || current.session.id !== id)) attach(id, linkToken);
  });
  loadSystems();
})();
