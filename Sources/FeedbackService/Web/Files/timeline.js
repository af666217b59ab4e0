"use strict";
/**
 * A virtualised list of `count` rows of one height: only the rows in view (and a few either side) exist in the
 * DOM, a pool of elements reused as the list scrolls, so 100,000 rows or more cost what 40 do. Past the height a
 * browser can scroll (`VirtualList.maxHeight`), the scroll position maps onto the rows proportionally.
 *
 * It never reads the layout to render: the view's height comes from a ResizeObserver and the scroll position from
 * its own scrolling or the scroll events, so a list that follows a fast session costs one layout a frame.
 *
 * Options: `rowHeight` (px), `renderRow(element, index)` fills a pooled row, `onSelect(index)` when a row is
 * clicked, `onRange(first, last)` after each render with the rows in view, `onUserScroll()` when a person scrolled.
 */
class VirtualList {
  constructor(container, options) {
    this.container = container;
    this.options = options;
    this.rowHeight = options.rowHeight;
    this.count = 0;
    this.selected = -1;
    this.pool = [];
    this.frame = 0;
    this.top = 0; // the container's scrollTop, as last set or seen
    this.view = 0; // its height
    this.spacer = el("div", { class: "virtual-spacer" });
    container.replaceChildren(this.spacer);
    container.addEventListener("scroll", () => {
      // The list's own scrolling lands where it said (the browser may clamp it): only a person's moves it elsewhere.
      const top = container.scrollTop;
      if (Math.abs(top - this.top) < 1) return;
      this.top = top;
      if (this.options.onUserScroll) this.options.onUserScroll();
      this.schedule();
    }, { passive: true });
    container.addEventListener("click", (event) => {
      const row = event.target.closest(".virtual-row");
      if (row && row.dataset.index) this.options.onSelect(Number(row.dataset.index));
    });
    new ResizeObserver((entries) => {
      this.view = entries[entries.length - 1].contentRect.height;
      this.schedule();
    }).observe(container);
  }

  /** The greatest spacer height used; beyond it the rows are mapped onto the scroll range. */
  static get maxHeight() { return 8000000; }

  get fullHeight() { return this.count * this.rowHeight; }
  get height() { return Math.min(this.fullHeight, VirtualList.maxHeight); }

  /** The offset into the full list of rows at the top of the view. */
  get offset() {
    const scrollable = this.height - this.view;
    if (scrollable <= 0) return 0;
    return Math.min(this.top, scrollable) / scrollable * (this.fullHeight - this.view);
  }

  /** Whether the view shows the last row (a list that follows its end keeps doing so). */
  get atEnd() {
    return this.top + this.view >= this.height - this.rowHeight;
  }

  setCount(count) {
    if (count === this.count) return;
    this.count = count;
    this.spacer.style.height = this.height + "px";
    this.schedule();
  }

  select(index) {
    this.selected = index;
    this.schedule();
  }

  /** Forgets what the rows show (another list begins) and scrolls to the top: each row is filled again. */
  clear() {
    for (const row of this.pool) delete row.dataset.key;
    this.scrollToOffset(0);
  }

  /** Scrolls so that row `index` is in view: at the bottom edge with `end`, else centred unless already visible. */
  reveal(index, end) {
    const top = index * this.rowHeight;
    const offset = this.offset;
    if (!end && top >= offset && top + this.rowHeight <= offset + this.view) return;
    const wanted = end ? top + this.rowHeight - this.view : top - (this.view - this.rowHeight) / 2;
    this.scrollToOffset(Math.max(0, wanted));
  }

  scrollToOffset(offset) {
    // Just shown, before its ResizeObserver said: read the height once.
    if (this.view === 0) this.view = this.container.clientHeight;
    const scrollable = Math.max(0, this.height - this.view);
    const full = this.fullHeight - this.view;
    const top = full <= 0 ? 0 : Math.round(Math.min(offset, full) / full * scrollable);
    if (Math.abs(top - this.top) >= 1) this.container.scrollTop = top;
    this.top = top;
    this.schedule();
  }

  schedule() {
    if (this.frame) return;
    this.frame = requestAnimationFrame(() => {
      this.frame = 0;
      this.render();
    });
  }

  /** Fills the rows in view now (a frame scheduled meanwhile is not needed any more). */
  render() {
    if (this.frame) {
      cancelAnimationFrame(this.frame);
      this.frame = 0;
    }
    const offset = this.offset;
    const first = Math.max(0, Math.floor(offset / this.rowHeight) - 4);
    const last = Math.min(this.count - 1, Math.ceil((offset + this.view) / this.rowHeight) + 4);
    const needed = Math.max(0, last - first + 1);
    while (this.pool.length < needed) {
      const row = el("div", { class: "virtual-row", role: "option" });
      row.style.height = this.rowHeight + "px";
      this.container.append(row);
      this.pool.push(row);
    }
    this.pool.forEach((row, slot) => {
      const index = first + slot;
      if (slot >= needed) {
        if (!row.hidden) row.hidden = true;
        return;
      }
      if (row.hidden) row.hidden = false;
      row.dataset.index = String(index);
      row.style.transform = "translateY(" + (this.top + index * this.rowHeight - offset) + "px)";
      const selected = index === this.selected;
      if (row.classList.contains("selected") !== selected) {
        row.classList.toggle("selected", selected);
        row.setAttribute("aria-selected", String(selected));
      }
      this.options.renderRow(row, index);
    });
    if (this.options.onRange) {
      this.options.onRange(Math.max(0, Math.floor(offset / this.rowHeight)),
        Math.min(this.count - 1, Math.floor((offset + this.view) / this.rowHeight)));
    }
  }
}
