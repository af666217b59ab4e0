"use strict";
/**
 * The inspector of the session the page shows (issue 32; docs/API.md, "Inspecting sessions"): a timeline with one
 * row per revision from the first kept one to the head, the state at the selected revision with what that revision
 * changed marked, a scrubber, the diff between two revisions, a fork at the selected revision, and live follow.
 *
 * The timeline is virtual: the entries of the rows in view are read from the history API in pages of
 * `Inspector.page` revisions as they scroll into view (at most `Inspector.pagesKept` pages are kept). Live follow
 * takes the head's revision, state and patch from the page's own stream (client.js applies the patches): the
 * timeline grows with the stream's revisions and a state is never fetched per event. A state at another revision
 * comes from `states/{rev}`, or from the one before it and the entry's patch. Rendering happens at most once per
 * animation frame, however fast the stream goes.
 *
 * Hooks: `token(id)` (`--auth jwt`), `forked(answer)` when a fork was made, `unavailable()` when the server's
 * inspection routes are off. Without a journal (409 `export-unavailable`) the inspector stays hidden.
 */
class Inspector {
  static get page() { return 100; }
  static get pagesKept() { return 200; }
  static get statesKept() { return 64; }
  static get followInterval() { return 100; }

  constructor(hooks) {
    this.hooks = hooks;
    this.section = byId("inspector");
    this.target = null;
    this.frame = 0;
    this.updatedAt = 0;
    this.forks = new Map(); // fork id → {id, rev} it came from, for forks made in this tab
    this.timeline = new VirtualList(byId("timeline"), {
      rowHeight: 26,
      renderRow: (row, index) => this.renderRow(row, index),
      onSelect: (index) => this.target && this.select(this.target.keptFrom + index),
      onRange: (first, last) => this.inView(first, last),
      // A person scrolling away from the end stops following.
      onUserScroll: () => {
        if (this.target && this.target.following && !this.timeline.atEnd) this.follow(false);
      },
    });
    this.tree = new StateTree(byId("inspector-state"));
    byId("timeline").addEventListener("keydown", (event) => this.key(event));
    byId("inspector-follow").addEventListener("click", () => this.follow(!(this.target && this.target.following)));
    byId("inspector-scrubber").addEventListener("input", (event) => this.select(Number(event.target.value), true));
    byId("inspector-rev").addEventListener("change", (event) => this.select(Number(event.target.value), true));
    byId("inspector-fork").addEventListener("click", () => this.fork());
    byId("inspector-resume").addEventListener("click", () => this.resume());
    byId("inspector-diff").addEventListener("submit", (event) => {
      event.preventDefault();
      this.diff();
    });
  }

  /** Starts inspecting session `id` (the page attached it); `snapshot` is its GET answer. */
  async inspect(id, snapshot) {
    if (this.historyless) return;
    const target = { id, keptFrom: 0, head: snapshot ? snapshot.rev : 0, pages: new Map(), loading: new Set(),
      selected: 0, following: true, live: null, liveOps: new Map(), states: new Map(), wanted: -1, timer: 0,
      retry: 0, shown: "", ready: false,
      forkOf: (snapshot && snapshot.forkOf) || this.forks.get(id) || null };
    this.target = target;
    this.notice(null);
    this.error(null);
    let answer;
    try {
      answer = await FeedbackHost.inspect.history(id, { limit: 1 }, this.token());
    } catch (error) {
      if (this.target !== target) return;
      this.target = null;
      this.section.hidden = true;
      if (inspectorUnavailable(error)) this.hooks.unavailable();
      // A server without a journal has no history to show: not asked again.
      if (problemIs(error, "export-unavailable")) this.historyless = true;
      return;
    }
    if (this.target !== target) return;
    target.ready = true;
    target.keptFrom = answer.keptFrom;
    target.head = Math.max(target.head, answer.head, target.live ? target.live.rev : 0);
    target.selected = target.head;
    this.section.hidden = false;
    byId("inspector-resume").hidden = true;
    this.checkEffects(target);
    byId("inspector-origin").textContent = target.forkOf
      ? "fork of " + target.forkOf.id + " at rev " + target.forkOf.rev : "";
    byId("diff-from").value = String(target.keptFrom);
    byId("diff-to").value = String(target.head);
    byId("diff-ops").replaceChildren();
    byId("diff-title").textContent = "";
    this.tree.toggled.clear();
    this.timeline.clear();
    this.follow(true);
  }

  close() {
    this.target = null;
    this.section.hidden = true;
    this.timeline.setCount(0);
  }

  token() {
    return this.target ? this.hooks.token(this.target.id) : undefined;
  }

  /** The page's stream gave a state (client.js applied its patch). */
  live(state, rev) {
    const t = this.target;
    if (!t) return;
    t.live = { state, rev };
    this.schedule();
  }

  /** The page's stream gave a patch: the one of revision `rev` when its base is the revision before. */
  patch(data) {
    const t = this.target;
    if (!t || data.base !== data.rev - 1) return;
    t.liveOps.set(data.rev, data.ops);
    if (t.liveOps.size > 256) t.liveOps.delete(t.liveOps.keys().next().value);
  }

  ended(reason) {
    if (!this.target) return;
    this.notice("The session ended (" + reason + "): its history is gone with it.");
  }

  /**
   * Asks for an update at the next animation frame; while following a running session, at most one each
   * `Inspector.followInterval` ms (a person reads no faster, and the page keeps its frames short).
   */
  schedule() {
    if (this.frame) return;
    const t = this.target;
    const wait = t && t.following ? this.updatedAt + Inspector.followInterval - performance.now() : 0;
    const frame = () => {
      this.frame = requestAnimationFrame(() => {
        this.frame = 0;
        this.updatedAt = performance.now();
        this.update();
      });
    };
    if (wait > 0) this.frame = setTimeout(frame, wait);
    else frame();
  }

  /** Once per frame: the head the stream reached, the selection that follows it, the state in view. */
  update() {
    const t = this.target;
    if (!t || !t.ready) return;
    if (t.live && t.live.rev > t.head) t.head = t.live.rev;
    this.timeline.setCount(t.head - t.keptFrom + 1);
    const scrubber = byId("inspector-scrubber");
    scrubber.min = String(t.keptFrom);
    scrubber.max = String(t.head);
    byId("inspector-range").textContent = "revisions " + t.keptFrom + "–" + t.head +
      (t.keptFrom > 0 ? " (earlier ones not kept)" : "");
    // Following, the selection is the stream's revision (the journal's head may be a little ahead or behind).
    if (t.following) t.selected = t.live ? t.live.rev : t.head;
    scrubber.value = String(t.selected);
    const field = byId("inspector-rev");
    if (document.activeElement !== field) field.value = String(t.selected);
    if (t.following && document.activeElement !== byId("diff-to")) byId("diff-to").value = String(t.selected);
    byId("inspector-fork").textContent = "Fork at rev " + t.selected;
    byId("inspector-follow").setAttribute("aria-pressed", String(t.following));
    byId("inspector-follow").textContent = t.following ? "Following" : "Follow";
    this.timeline.select(t.selected - t.keptFrom);
    if (t.following) this.timeline.reveal(t.head - t.keptFrom, true);
    this.timeline.render();
    this.showState();
  }

  follow(on) {
    const t = this.target;
    if (!t) return;
    t.following = on;
    this.schedule();
  }

  /** Selects revision `rev`; `reveal` scrolls the timeline to it (the scrubber, the revision field, keys). */
  select(rev, reveal) {
    const t = this.target;
    if (!t || !Number.isFinite(rev)) return;
    t.selected = Math.min(t.head, Math.max(t.keptFrom, Math.round(rev)));
    t.following = t.selected === t.head && t.following;
    if (reveal) this.timeline.reveal(t.selected - t.keptFrom, false);
    byId("diff-to").value = String(t.selected);
    this.schedule();
  }

  key(event) {
    const t = this.target;
    if (!t) return;
    const rows = Math.max(1, Math.floor(this.timeline.view / this.timeline.rowHeight) - 1);
    const moves = { ArrowUp: -1, ArrowDown: 1, PageUp: -rows, PageDown: rows };
    if (event.key === "End") {
      this.follow(true);
    } else if (event.key === "Home") {
      this.select(t.keptFrom, true);
    } else if (moves[event.key]) {
      this.select(t.selected + moves[event.key], true);
    } else {
      return;
    }
    event.preventDefault();
  }

  afterOf(rev) {
    const t = this.target;
    return t.keptFrom + Math.floor((rev - t.keptFrom - 1) / Inspector.page) * Inspector.page;
  }

  entry(rev) {
    const t = this.target;
    const page = t.pages.get(this.afterOf(rev));
    return page ? page.entries.get(rev) : undefined;
  }

  /** Rows `first`…`last` are in view: read the pages they need that are missing, or partial and a little old. */
  inView(first, last) {
    const t = this.target;
    if (!t || !t.ready) return;
    const now = performance.now();
    const from = this.afterOf(Math.max(t.keptFrom + 1, t.keptFrom + first));
    let behind = false;
    for (let after = from; after < t.keptFrom + last; after += Inspector.page) {
      const page = t.pages.get(after);
      // A page that ended at the journal's head is read again once the stream says the head moved on.
      const stale = page && !page.complete && t.head > page.head;
      if (t.loading.has(after) || t.loading.size >= 3 || (stale && now - page.at < 250)) {
        behind = behind || stale;
        continue;
      }
      if (!page || stale) this.load(t, after);
    }
    if (behind && !t.retry) {
      t.retry = setTimeout(() => {
        t.retry = 0;
        if (this.target === t) this.timeline.schedule();
      }, 250);
    }
    if (t.pages.size > Inspector.pagesKept) {
      const middle = t.keptFrom + first;
      const far = [...t.pages.keys()].sort((a, b) => Math.abs(b - middle) - Math.abs(a - middle));
      for (const after of far.slice(0, t.pages.size - Inspector.pagesKept)) t.pages.delete(after);
    }
  }

  /** Reads the page of history after `after`; `next` of one page is the `after` of the following one. */
  async load(t, after) {
    t.loading.add(after);
    let answer;
    try {
      answer = await FeedbackHost.inspect.history(t.id, { after, limit: Inspector.page }, this.token());
    } catch (error) {
      t.loading.delete(after);
      if (this.target === t) this.error(error);
      return;
    }
    t.loading.delete(after);
    if (this.target !== t) return;
    if (answer.keptFrom !== t.keptFrom) {
      // Compaction moved the first kept revision: the rows start elsewhere now.
      t.keptFrom = answer.keptFrom;
      t.pages.clear();
      t.states.clear();
      t.selected = Math.max(t.selected, t.keptFrom);
    } else {
      const entries = new Map(answer.entries.map((entry) => [entry.rev, entry]));
      t.pages.set(after, { entries, complete: answer.next !== null || answer.head >= after + Inspector.page,
        head: answer.head, at: performance.now() });
    }
    if (answer.head > t.head) t.head = answer.head;
    // The next update fills the rows (and, when the selected revision's entry came, marks its changes).
    this.schedule();
  }

  renderRow(row, index) {
    const t = this.target;
    if (!t) return;
    const rev = t.keptFrom + index;
    const entry = rev === t.keptFrom ? null : this.entry(rev);
    const key = rev + (entry ? ":e" : rev === t.keptFrom ? ":k" : ":-");
    if (row.dataset.key === key) return;
    row.dataset.key = key;
    row.dataset.rev = String(rev);
    row.classList.toggle("origin-client", !!entry && entry.origin === "client");
    row.classList.toggle("origin-effect", !!entry && entry.origin === "effect");
    row.classList.toggle("pending", !entry && rev !== t.keptFrom);
    const number = el("span", { class: "rev" }, String(rev));
    if (rev === t.keptFrom) {
      row.replaceChildren(number, el("span", { class: "event muted" },
        rev === 0 ? "initial state" : "first kept state"));
    } else if (!entry) {
      row.replaceChildren(number, el("span", { class: "event muted" }, "…"));
    } else {
      const event = entry.event || {};
      const rest = Object.keys(event).filter((k) => k !== "type").map((k) => k + ": " + JSON.stringify(event[k]));
      const badges = [el("span", { class: "badge origin", "data-origin": entry.origin }, entry.origin)];
      if (entry.feedback) badges.push(el("span", { class: "badge feedback" }, entry.feedback));
      row.replaceChildren(number, ...badges,
        el("span", { class: "event" }, String(event.type || JSON.stringify(event))),
        el("span", { class: "detail muted" }, rest.join(", ")),
        el("span", { class: "time muted" }, clockTime(entry.time)));
    }
  }

  /** The state at the selected revision, with what that revision changed marked. */
  showState() {
    const t = this.target;
    const rev = t.selected;
    const entry = this.entry(rev);
    byId("inspector-state-rev").textContent = String(rev);
    byId("inspector-event").textContent = entry
      ? entry.origin + (entry.feedback ? " (" + entry.feedback + ")" : "") + ": " + JSON.stringify(entry.event)
      : rev === t.keptFrom ? (rev === 0 ? "initial state" : "first kept state") : "";
    if (t.following && t.live && t.live.rev === rev) {
      this.cancelFetch();
      this.showTree("live", rev, t.live.state, t.liveOps.get(rev) || (entry && entry.patch), !!entry);
      return;
    }
    let state = t.states.get(rev);
    const before = t.states.get(rev - 1);
    if (state === undefined && before !== undefined && entry) {
      try {
        state = FeedbackHost.applyPatch(structuredClone(before), entry.patch);
        this.keep(rev, state);
      } catch (error) {
        state = undefined;
      }
    }
    if (state === undefined) return this.fetchState(rev);
    this.cancelFetch();
    this.showTree("history", rev, state, entry ? entry.patch : [], !!entry);
    if (!entry && rev !== t.keptFrom) this.inView(rev - t.keptFrom, rev - t.keptFrom);
  }

  /** Renders the tree unless it already shows this revision from this source (with its entry, once known). */
  showTree(source, rev, state, ops, withEntry) {
    const t = this.target;
    const key = source + ":" + rev + ":" + withEntry;
    if (t.shown === key) return;
    t.shown = key;
    const container = byId("inspector-state");
    container.dataset.source = source;
    container.dataset.rev = String(rev);
    this.tree.render(state, ops);
  }

  cancelFetch() {
    const t = this.target;
    clearTimeout(t.timer);
    t.wanted = -1;
  }

  keep(rev, state) {
    const states = this.target.states;
    states.delete(rev);
    states.set(rev, state);
    if (states.size > Inspector.statesKept) states.delete(states.keys().next().value);
  }

  /** Asks for the state at `rev` once the selection rests for a moment (a scrubber drag asks only at its end). */
  fetchState(rev) {
    const t = this.target;
    if (t.wanted === rev) return;
    t.wanted = rev;
    clearTimeout(t.timer);
    t.timer = setTimeout(async () => {
      let answer;
      try {
        answer = await FeedbackHost.inspect.state(t.id, rev, this.token());
      } catch (error) {
        if (this.target === t && t.wanted === rev) this.error(error);
        t.wanted = -1;
        return;
      }
      if (this.target !== t) return;
      this.keep(rev, answer.state);
      if (t.wanted === rev) t.wanted = -1;
      if (t.selected === rev) this.schedule();
    }, 80);
  }

  async diff() {
    const t = this.target;
    if (!t) return;
    const from = Number(byId("diff-from").value);
    const to = Number(byId("diff-to").value);
    try {
      const answer = await FeedbackHost.inspect.diff(t.id, from, to, this.token());
      byId("diff-title").textContent = "From rev " + answer.from + " to rev " + answer.to + ":";
      renderPatch(byId("diff-ops"), answer.patch);
      this.error(null);
    } catch (error) {
      this.error(error);
    }
  }

  async fork() {
    const t = this.target;
    if (!t) return;
    const rev = t.selected;
    let answer;
    try {
      answer = await FeedbackHost.inspect.fork(t.id, rev, this.token());
    } catch (error) {
      return this.error(error);
    }
    const forkOf = answer.forkOf || { id: t.id, rev };
    this.forks.set(answer.id, forkOf);
    this.hooks.forked(answer);
    const open = el("a", { href: "#" + answer.id, id: "inspector-open-fork" }, "open it");
    this.notice("Forked rev " + forkOf.rev + " into session ", el("code", {}, answer.id),
      " (its effects are paused until resumed): ", open, ".");
  }

  /** Offers to resume the effects of a session whose feedbacks do not run (a fork's are paused at first). */
  async checkEffects(target) {
    let containment;
    try {
      containment = await FeedbackHost.inspect.containment(target.id, this.token());
    } catch (error) {
      return;
    }
    if (this.target === target) byId("inspector-resume").hidden = containment.feedbacks === "running";
  }

  async resume() {
    const t = this.target;
    if (!t) return;
    try {
      await FeedbackHost.inspect.resumeEffects(t.id, this.token());
    } catch (error) {
      return this.error(error);
    }
    byId("inspector-resume").hidden = true;
    this.notice("Effects resumed: the fork's feedbacks run from its current state.");
  }

  notice(...content) {
    const box = byId("inspector-notice");
    box.replaceChildren(...(content[0] ? content : []));
    box.hidden = !content[0];
  }

  error(error) {
    const box = byId("inspector-error");
    box.hidden = !error;
    box.textContent = error ? ((error.problem && error.problem.title ? error.problem.title + ": " : "") +
      error.message) : "";
  }
}
