"use strict";
/**
 * A JSON state as a tree of JSON Pointers, with what a patch changed marked: the node at each op's path (added,
 * replaced, moved or copied there), its ancestors opened, and a line for each member the patch removed.
 * Objects and arrays render their members only while open, at most `StateTree.shown` of them until asked for all,
 * so a large state costs what is on screen. Which nodes a person opened or closed is kept across renders.
 */
class StateTree {
  constructor(container) {
    this.container = container;
    this.toggled = new Map(); // pointer → open, as the person left it
    this.changes = new Map();
    this.removed = new Map();
    this.complete = new Set();
  }

  static get shown() { return 200; }

  /** Shows `state`; `ops` (RFC 6902, may be empty) says what the revision changed. */
  render(state, ops) {
    this.changes = new Map();
    this.removed = new Map(); // parent pointer → removed member names
    for (const op of ops || []) {
      if (op.op === "remove" || op.op === "move") {
        const source = op.op === "move" ? op.from : op.path;
        const cut = source.lastIndexOf("/");
        const parent = source.slice(0, cut);
        if (!this.removed.has(parent)) this.removed.set(parent, []);
        this.removed.get(parent).push(source.slice(cut + 1));
      }
      if (op.op !== "remove" && op.op !== "test") this.changes.set(op.path, op.op);
    }
    const root = this.node("", "state", state, 0);
    this.container.replaceChildren(root);
  }

  /** Whether a change lies at or below `pointer`. */
  touches(pointer) {
    const prefix = pointer + "/";
    for (const path of this.changes.keys()) if (path === pointer || path.startsWith(prefix)) return true;
    for (const path of this.removed.keys()) if (path === pointer || path.startsWith(prefix)) return true;
    return false;
  }

  node(pointer, key, value, depth) {
    const kind = this.changes.get(pointer);
    const label = el("span", { class: "key" }, key);
    if (value === null || typeof value !== "object") {
      const node = el("div", { class: "leaf", "data-pointer": pointer }, label, ": ",
        el("span", { class: "value " + (value === null ? "null" : typeof value) }, JSON.stringify(value)));
      if (kind) node.classList.add("changed", "changed-" + kind);
      return node;
    }
    const names = Array.isArray(value) ? value.map((_, i) => String(i)) : Object.keys(value);
    const size = Array.isArray(value) ? "[" + names.length + "]" : "{" + names.length + "}";
    const details = el("details", { "data-pointer": pointer }, el("summary", {}, label, " ",
      el("span", { class: "muted" }, size)));
    if (kind) details.classList.add("changed", "changed-" + kind);
    const touched = this.touches(pointer);
    const open = this.toggled.has(pointer) ? this.toggled.get(pointer) : depth === 0 || (touched && depth < 12);
    let filled = false;
    const fill = () => {
      if (filled) return;
      filled = true;
      const limit = this.complete.has(pointer) ? names.length : StateTree.shown;
      const children = names.slice(0, limit).map((name) =>
        this.node(pointer + "/" + name.replace(/~/g, "~0").replace(/\//g, "~1"), name, value[name], depth + 1));
      for (const name of this.removed.get(pointer) || []) {
        children.push(el("div", { class: "leaf changed changed-remove" }, el("span", { class: "key" },
          name.replace(/~1/g, "/").replace(/~0/g, "~")), ": removed"));
      }
      if (names.length > limit) {
        const more = el("button", { type: "button", class: "more" }, "show all " + names.length);
        more.addEventListener("click", () => {
          this.complete.add(pointer);
          filled = false;
          details.lastChild.remove();
          fill();
        });
        children.push(more);
      }
      details.append(el("div", { class: "children" }, ...children));
    };
    details.open = open;
    if (open) fill();
    details.addEventListener("toggle", () => {
      this.toggled.set(pointer, details.open);
      if (details.open) fill();
    });
    return details;
  }
}

/** An RFC 6902 patch as a list: one line per operation, its kind as a badge. */
function renderPatch(list, ops) {
  if (!ops.length) {
    list.replaceChildren(el("li", { class: "muted" }, "no change"));
    return;
  }
  list.replaceChildren(...ops.map((op) => el("li", { class: "op op-" + op.op },
    el("span", { class: "badge" }, op.op), " ", el("code", {}, op.path || "(the whole state)"),
    op.from !== undefined ? el("span", { class: "muted" }, " from " + op.from) : null,
    op.value !== undefined ? " " : null,
    op.value !== undefined ? el("code", { class: "op-value" }, JSON.stringify(op.value)) : null)));
}
