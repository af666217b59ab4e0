"use strict";
/**
 * A virtualised list of `count` rows of one height: only the rows in view (and a few either side) exist in the
 * DOM, a pool of elements reused as the list scrolls, so 100,000 rows or more cost what 40 do. Past the height a
 * browser can scroll (about 33 million pixels in Chromium), the scroll position maps onto the rows proportionally.
 *
 * Options: `rowHeight` (px), `renderRow(element, index)` fills a pooled row, `onSelect(index)` when a row is
 * clicked, `onRange(first, last)` after each render with the rows in view.
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
    this.spacer = el("div", { class: "virtual-spacer" });
    container.replaceChildren(this.spacer);
    container.addEventListener("scroll", () => this.schedule(), { passive: true });
    container.addEventListener("click", (event) => {
      const row = event.target.closest(".virtual-row");
      if (row && row.dataset.index) this.options.onSelect(Number(row.dataset.index));
    });
    new ResizeObserver(() => this.schedule()).observe(container);
  }

  /** The greatest spacer height used; beyond it the rows are mapped onto the scroll range. */
  static get maxHeight() { return 8000000; }

  get fullHeight() { return this.count * this.rowHeight; }
  get height() { return Math.min(this.fullHeight, VirtualList.maxHeight); }

  /** The offset into the full list of rows at the top of the view. */
  get offset() {
    const view = this.container.clientHeight;
    const scrollable = this.height - view;
    if (scrollable <= 0) return 0;
    return this.container.scrollTop / scrollable * (this.fullHeight - view);
  }

  setCount(count) {
    if (count === this.count) return;
    this.count = count;
    this.spacer.style.height = this.height + "px";
    this.schedule();
  }

  /** Forgets what the rows show (another list begins): each is filled again. */
  clear() {
    for (const row of this.pool) delete row.dataset.key;
    this.container.scrollTop = 0;
    this.schedule();
  }

  select(index) {
    this.selected = index;
    this.schedule();
  }

  /** Scrolls so that row `index` is in view: at the bottom edge with `end`, else centred unless already visible. */
  reveal(index, end) {
    const view = this.container.clientHeight;
    const top = index * this.rowHeight;
    const offset = this.offset;
    if (!end && top >= offset && top + this.rowHeight <= offset + view) return;
    const wanted = end ? top + this.rowHeight - view : top - (view - this.rowHeight) / 2;
    this.scrollToOffset(Math.max(0, wanted));
  }

  scrollToOffset(offset) {
    const view = this.container.clientHeight;
    const scrollable = this.height - view;
    const full = this.fullHeight - view;
    this.container.scrollTop = full <= 0 ? 0 : Math.min(offset, full) / full * scrollable;
    this.schedule();
  }

  /** Whether the view shows the last row (a list that follows its end keeps doing so). */
  get atEnd() {
    const view = this.container.clientHeight;
    return this.container.scrollTop + view >= this.height - this.rowHeight;
  }

  schedule() {
    if (this.frame) return;
    this.frame = requestAnimationFrame(() => {
      this.frame = 0;
      this.render();
    });
  }

  /** Re-fills the rows in view now (their data arrived). */
  render() {
    const view = this.container.clientHeight;
    const offset = this.offset;
    const first = Math.max(0, Math.floor(offset / this.rowHeight) - 4);
    const last = Math.min(this.count - 1, Math.ceil((offset + view) / this.rowHeight) + 4);
    const needed = Math.max(0, last - first + 1);
    while (this.pool.length < needed) {
      const row = el("div", { class: "virtual-row", role: "option" });
      row.style.height = this.rowHeight + "px";
      this.container.append(row);
      this.pool.push(row);
    }
    const scrollTop = this.container.scrollTop;
    this.pool.forEach((row, slot) => {
      const index = first + slot;
      if (slot >= needed) {
        row.hidden = true;
        row.removeAttribute("data-index");
        return;
      }
      row.hidden = false;
      row.dataset.index = String(index);
      row.style.transform = "translateY(" + (scrollTop + index * this.rowHeight - offset) + "px)";
      row.classList.toggle("selected", index === this.selected);
      row.setAttribute("aria-selected", String(index === this.selected));
      this.options.renderRow(row, index);
    });
    if (this.options.onRange) {
      this.options.onRange(Math.max(0, Math.floor(offset / this.rowHeight)),
        Math.min(this.count - 1, Math.floor((offset + view) / this.rowHeight)));
    }
  }
}
