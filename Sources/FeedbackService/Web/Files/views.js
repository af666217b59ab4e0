"use strict";
/** Creates an element with attributes and children (strings become text, never HTML). */
function el(tag, attributes, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes || {})) node.setAttribute(name, value);
  node.append(...children.filter((c) => c !== null && c !== undefined));
  return node;
}

function button(id, text, onClick) {
  const node = el("button", { type: "button", id }, text);
  node.addEventListener("click", onClick);
  return node;
}

/** The field of an example event other than "type", e.g. "query" in {"type":"search","query":"swift"}. */
function exampleField(system, type, fallback) {
  const example = (system.exampleEvents || []).find((e) => e.type === type) || {};
  return Object.keys(example).find((k) => k !== "type") || fallback;
}

const pageViews = {
  counter(send) {
    const value = el("span", { id: "counter-value", class: "big" }, "0");
    const amount = el("input", { id: "counter-amount", type: "number", value: "5", "aria-label": "Amount" });
    const add = el("form", { id: "counter-add", class: "row" }, amount, el("button", { type: "submit" }, "Add"));
    add.addEventListener("submit", (e) => {
      e.preventDefault();
      send({ type: "add", amount: Number(amount.value) || 0 });
    });
    const element = el("div", {},
      el("div", { class: "row" }, button("counter-decrement", "−", () => send({ type: "decrement" })), value,
        button("counter-increment", "+", () => send({ type: "increment" }))),
      add);
    return { element, update: (state) => { value.textContent = String(state.count); } };
  },

  catch(send) {
    const human = el("div", { class: "player", id: "catch-human" }, "You");
    const machine = el("div", { class: "player", id: "catch-machine" }, "Machine");
    const count = el("span", { id: "catch-count" }, "0");
    const toss = button("catch-throw", "Throw to the machine", () => send({ type: "throwToMachine" }));
    const element = el("div", {}, el("div", { class: "catch" }, human, toss, machine),
      el("p", { class: "muted" }, "Throws: ", count));
    return {
      element,
      update(state) {
        human.classList.toggle("holds", state.holder === "human");
        machine.classList.toggle("holds", state.holder === "machine");
        human.textContent = state.holder === "human" ? "You ● have the ball" : "You";
        machine.textContent = state.holder === "machine" ? "Machine ● has the ball" : "Machine";
        toss.disabled = state.holder !== "human";
        count.textContent = String(state.throwCount);
      },
    };
  },

  "traffic-light"(send) {
    const lamps = ["red", "yellow", "green"].map((c) => el("div", { class: "lamp " + c, id: "lamp-" + c }));
    const phase = el("span", { id: "light-phase" });
    const start = button("light-start", "Start", () => send({ type: "start" }));
    const stop = button("light-stop", "Stop", () => send({ type: "stop" }));
    const element = el("div", { class: "row" }, el("div", { class: "light" }, ...lamps),
      el("div", {}, el("p", {}, "Phase: ", phase), el("div", { class: "row" }, start, stop)));
    return {
      element,
      update(state) {
        for (const lamp of lamps) lamp.classList.toggle("on", lamp.classList.contains(state.phase));
        phase.textContent = state.phase + (state.running ? " (running, " + state.changes + " changes)" : " (stopped)");
        start.disabled = state.running;
        stop.disabled = !state.running;
      },
    };
  },

  paging(send, system) {
    const queryField = exampleField(system, "search", "query");
    const query = el("input", { id: "paging-query", type: "search", placeholder: "Search the catalog…",
      "aria-label": "Search" });
    const status = el("span", { id: "paging-status", class: "muted" });
    const retry = button("paging-retry", "Retry", () => send({ type: "retry" }));
    const clear = button("paging-clear", "Clear", () => { query.value = ""; send({ type: "clear" }); });
    const sentinel = el("li", { class: "sentinel", id: "paging-sentinel" }, "");
    const list = el("ul", { id: "paging-list" }, sentinel);
    const element = el("div", { class: "paging" }, query, el("div", { class: "row" }, status, retry, clear), list);
    let timer = null;
    let rendered = [];
    let state = null;
    let requestedAt = null;
    query.addEventListener("input", () => {
      clearTimeout(timer);
      timer = setTimeout(() => send({ type: "search", [queryField]: query.value }), 300);
    });

    function kind(s) {
      const value = s && s.status;
      if (typeof value === "string") return { name: value, message: s.message || s.lastError || "" };
      if (value && typeof value === "object") {
        const name = Object.keys(value)[0] || "unknown";
        const inner = value[name];
        return { name, message: typeof inner === "string" ? inner : (inner && inner.message) || "" };
      }
      return { name: "idle", message: "" };
    }

    /** Asks for the next page when the list's end is in (or near) view and nothing is loading. */
    function more() {
      const near = sentinel.getBoundingClientRect().top < list.getBoundingClientRect().bottom + 120;
      if (!state || !near || kind(state).name !== "idle") return;
      if (!state.nextPage || requestedAt === state.pagesLoaded) return;
      requestedAt = state.pagesLoaded;
      send({ type: "loadNextPage" });
    }

    function item(entry) {
      if (entry === null || typeof entry !== "object") return el("li", {}, String(entry));
      const key = ["title", "name", "full_name", "id"].find((k) => entry[k] !== undefined);
      const rest = Object.entries(entry).filter(([k, v]) => k !== key && v !== null && typeof v !== "object");
      return el("li", {}, el("div", {}, key ? String(entry[key]) : JSON.stringify(entry)),
        el("div", { class: "sub" }, rest.map(([k, v]) => k + ": " + v).join(" · ")));
    }

    new IntersectionObserver(more, { root: list, rootMargin: "0px 0px 120px 0px" }).observe(sentinel);

    return {
      element,
      update(next) {
        state = next;
        const items = next.items || [];
        if (items.length < rendered.length || (rendered.length && items[0] !== rendered[0])) {
          for (const node of [...list.children]) if (node !== sentinel) node.remove();
          rendered = [];
        }
        const fragment = document.createDocumentFragment();
        for (const entry of items.slice(rendered.length)) fragment.append(item(entry));
        list.insertBefore(fragment, sentinel);
        rendered = items.slice();
        if (document.activeElement !== query && typeof next.query === "string") query.value = next.query;
        const k = kind(next);
        const total = next.total ?? next.totalCount;
        const pages = next.pagesLoaded ?? 0;
        status.textContent = items.length + (total != null ? " of " + total : "") + " items, " + pages +
          (pages === 1 ? " page · " : " pages · ") + k.name + (k.message ? ": " + k.message : "");
        status.dataset.kind = k.name;
        status.dataset.pages = String(pages);
        sentinel.textContent = k.name === "loading" ? "loading…" : k.name === "exhausted" ? "the end" : "";
        retry.hidden = k.name !== "failed";
        more();
      },
    };
  },
};
