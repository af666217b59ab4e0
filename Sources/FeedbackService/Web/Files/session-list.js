"use strict";
/** `document.getElementById`, for the inspector's scripts (page.js keeps its own `$`). */
const byId = (id) => document.getElementById(id);

/** A time in milliseconds since 1970 as the page shows it: the local time to the millisecond, with the date
 * (YYYY-MM-DD) when not today. Built from numbers: the timeline formats a few hundred a second while following. */
function clockTime(ms) {
  if (typeof ms !== "number") return "";
  const date = new Date(ms);
  const two = (n) => (n < 10 ? "0" : "") + n;
  const time = two(date.getHours()) + ":" + two(date.getMinutes()) + ":" + two(date.getSeconds()) + "." +
    String(date.getMilliseconds()).padStart(3, "0");
  const today = new Date();
  if (date.getFullYear() === today.getFullYear() && date.getMonth() === today.getMonth() &&
    date.getDate() === today.getDate()) return time;
  return date.getFullYear() + "-" + two(date.getMonth() + 1) + "-" + two(date.getDate()) + " " + time;
}

/** Whether an answer is of the kind `code` (its problem's type, `urn:feedbackhost:problem:CODE`). */
function problemIs(error, code) {
  return !!(error && error.problem && error.problem.type === "urn:feedbackhost:problem:" + code);
}

/** Whether an inspection answer says the server's inspection routes are off (`--inspector off`). */
function inspectorUnavailable(error) {
  return error.status === 404 && problemIs(error, "inspector-off");
}

/**
 * The sessions the server holds (`GET /v1/sessions`), filtered by system and status, a page of 50 at a time, with
 * their counts. A row's link opens the session in the page. Hidden while the server's inspection routes are off or
 * the page has no token that may list. (Without a journal the list still shows the sessions in memory.)
 *
 * Hooks: `token()` the token to list with (`--auth jwt`), `current()` the id the page shows, `unavailable()` when
 * the server has no inspector, `forkOf(id)` what a fork made in this tab was forked from.
 */
class SessionList {
  constructor(hooks) {
    this.hooks = hooks;
    this.section = byId("sessions");
    this.cursor = null;
    this.generation = 0;
    byId("sessions-system").addEventListener("change", () => this.load());
    byId("sessions-status").addEventListener("change", () => this.load());
    byId("sessions-refresh").addEventListener("click", () => this.load());
    byId("sessions-more").addEventListener("click", () => this.load(true));
  }

  setSystems(systems) {
    const select = byId("sessions-system");
    select.replaceChildren(el("option", { value: "" }, "every system"),
      ...systems.map((system) => el("option", { value: system.name }, system.name)));
  }

  /** Loads the first page (or, with `more`, the next one) under the filters chosen. */
  async load(more) {
    const generation = ++this.generation;
    const filters = { system: byId("sessions-system").value, status: byId("sessions-status").value, limit: 50,
      cursor: more ? this.cursor : undefined };
    let answer;
    try {
      answer = await FeedbackHost.inspect.sessions(filters, this.hooks.token());
    } catch (error) {
      if (generation !== this.generation) return;
      if (inspectorUnavailable(error)) this.hooks.unavailable();
      if (error.status === 401 || error.status === 403 || inspectorUnavailable(error)) {
        this.section.hidden = true;
        return;
      }
      byId("sessions-error").textContent = "Cannot list the sessions: " + error.message;
      byId("sessions-error").hidden = false;
      return;
    }
    if (generation !== this.generation) return;
    this.section.hidden = false;
    byId("sessions-error").hidden = true;
    this.cursor = answer.next;
    byId("sessions-more").hidden = !answer.next;
    const rows = answer.sessions.map((session) => this.row(session));
    if (more) byId("sessions-list").append(...rows);
    else byId("sessions-list").replaceChildren(...rows);
    byId("sessions-empty").hidden = byId("sessions-list").children.length > 0;
    byId("sessions-counts").textContent = this.describe(answer.counts, filters.system);
    this.mark();
  }

  describe(counts, system) {
    if (!counts) return "";
    const count = system ? (counts.systems || {})[system] : counts.total;
    if (!count) return system ? "no " + system + " sessions" : "";
    return count.total + (count.total === 1 ? " session: " : " sessions: ") + count.active + " active, " +
      count.passive + " passive, " + count.broken + " broken";
  }

  row(session) {
    const forkOf = session.forkOf || this.hooks.forkOf(session.id);
    const link = el("a", { href: "#" + session.id }, el("code", {}, session.id));
    return el("tr", { "data-id": session.id, "data-status": session.status },
      el("td", {}, link, forkOf ? " " : null, forkOf ? el("span", { class: "badge fork" }, "fork of " +
        forkOf.id.slice(0, 8) + "… at rev " + forkOf.rev) : null),
      el("td", {}, session.system),
      el("td", {}, el("span", { class: "badge status", "data-status": session.status }, session.status)),
      el("td", { class: "number" }, String(session.rev)),
      el("td", {}, clockTime(session.lastActivity)));
  }

  /** Marks the row of the session the page shows. */
  mark() {
    const current = this.hooks.current();
    for (const row of byId("sessions-list").children) row.classList.toggle("current", row.dataset.id === current);
  }
}
