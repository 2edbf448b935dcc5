// A run's Logs tab: its console lines (GET /api/runs/{dir}/console) with their times, stderr marked, SGR
// colours as spans (ansi.ts) and everything else a command may print shown as text. A run may have
// written millions of lines, so the view holds a window of them: the newest page first, older pages
// fetched when scrolled to the top, newer ones when scrolled to the bottom, and at most kMaxRows rows in
// the page (the far end of the window is dropped and fetched again when scrolled back to).
//
// Following (the default) keeps the view at the end: a live event saying the run's console changed fetches
// from the first line that may still have changed (a progress bar redrawn in place; `settled`), at most
// every kFollowMs; a burst of more than kMaxRows new lines starts again from the newest page. Scrolling up
// stops following; reaching the end of the output again, or the Follow button, resumes it; Start shows the
// oldest lines the server holds. The search box (the server's `q`) and the stream select restart from the
// newest page. Answers asked for before such a restart are dropped (`generation`).

import { type ConsoleLine, type ConsolePage, errorText, fetchConsole, isAbort } from './api';
import { parseAnsi } from './ansi';
import { button, clear, h } from './dom';
import type { RunEvent } from './events';
import { formatClock, formatTime } from './format';

const kPageLines = 500;
const kMaxRows = 3000;
const kFollowMs = 250;
const kSearchDebounceMs = 300;
const kRetryMs = 2000;
const kEdgePx = 400; // this near the top or bottom, the next page is fetched
const kEndPx = 4; // this near the bottom is the end

type Stream = 'all' | 'stdout' | 'stderr';
type Query = { after?: number; before?: number };

function lineText(text: string): HTMLElement {
  const el = h('span', { class: 'log-text' });
  for (const span of parseAnsi(text)) {
    const classes = [
      span.bold ? 'ansi-bold' : '',
      span.dim ? 'ansi-dim' : '',
      span.palette !== null ? `ansi-fg-${span.palette}` : '',
    ].filter((c) => c !== '');
    if (classes.length === 0 && span.color === null) {
      el.appendChild(document.createTextNode(span.text));
      continue;
    }
    const s = h('span', { class: classes.join(' ') || undefined }, span.text);
    // The colour is made of numbers by ansi.ts ('#rrggbb'), never of the line's text.
    if (span.color !== null) s.style.color = span.color;
    el.appendChild(s);
  }
  return el;
}

function lineRow(line: ConsoleLine): HTMLElement {
  const stream = line.stderr ? 'stderr' : 'stdout';
  return h(
    'div',
    { class: `log-line ${stream}`, testid: 'log-line', 'data-n': line.n, 'data-stream': stream },
    h('span', { class: 'log-time', title: formatTime(line.t) }, formatClock(line.t)),
    lineText(line.text),
    line.cut ? h('span', { class: 'log-cut', testid: 'log-cut', title: 'The line goes on: only its start was sent' }, ' …') : null,
  );
}

function rowNumber(el: Element | null): number {
  return el instanceof HTMLElement ? Number(el.dataset.n) : NaN;
}

export class LogsView {
  readonly root: HTMLElement;
  private readonly dir: string;
  private readonly scroller: HTMLElement;
  private readonly rows: HTMLElement;
  private readonly startNote: HTMLElement;
  private readonly emptyNote: HTMLElement;
  private readonly statusEl: HTMLElement;
  private readonly errorEl: HTMLElement;
  private readonly followBtn: HTMLButtonElement;
  private readonly jumpBtn: HTMLButtonElement;
  private readonly search: HTMLInputElement;
  private readonly streamSelect: HTMLSelectElement;
  private readonly resizes: ResizeObserver;

  // The window shown: every matching line numbered in [prev, next) is a row.
  private prev = 0;
  private next = 0;
  private first = 0;
  private total = 0; // lines written, as last heard (an answer or an event)
  private dropped = 0;
  private settled = 0;
  private loaded = false;
  private consoleVersion: number | null = null; // the last event's

  private following = true;
  private pinnedTop = 0; // where following last put the view; above it, the user scrolled up
  private active = false;
  private stale = false; // an event came while hidden
  private busy = false;
  private pending = false; // a fetch of newer lines was asked for while busy
  private generation = 0;
  private abort: AbortController | null = null;
  private lastFetch = 0;
  private followTimer: number | null = null;
  private searchTimer: number | null = null;
  private destroyed = false;

  constructor(dir: string) {
    this.dir = dir;
    this.search = h('input', {
      type: 'search',
      class: 'filter logs-search',
      placeholder: 'Search the output…',
      'aria-label': 'Search the output',
      testid: 'logs-search',
      maxlength: 256,
    });
    this.search.addEventListener('input', () => this.restartSoon());
    this.search.addEventListener('keydown', (ev) => {
      if (ev.key === 'Enter') this.restart();
    });
    this.streamSelect = h(
      'select',
      { class: 'logs-stream', 'aria-label': 'Stream', testid: 'logs-stream' },
      h('option', { value: 'all' }, 'stdout and stderr'),
      h('option', { value: 'stdout' }, 'stdout'),
      h('option', { value: 'stderr' }, 'stderr'),
    );
    this.streamSelect.addEventListener('change', () => this.restart());
    this.followBtn = button('Follow', { class: 'seg', testid: 'logs-follow', title: 'Keep the view at the end' }, () =>
      this.following ? this.setFollowing(false) : this.followEnd(),
    );
    this.jumpBtn = button('↓ New output', { class: 'btn btn-small', testid: 'logs-jump' }, () => this.followEnd());
    this.jumpBtn.hidden = true;
    const startBtn = button('⤒ Start', { class: 'btn btn-small', testid: 'logs-to-start', title: 'The oldest lines the server holds' }, () =>
      this.toStart(),
    );
    this.statusEl = h('span', { class: 'muted', testid: 'logs-status' });
    this.errorEl = h('div', { class: 'error', testid: 'logs-error', role: 'alert' });
    this.errorEl.hidden = true;
    this.startNote = h('div', { class: 'log-note', testid: 'logs-start' });
    this.emptyNote = h('div', { class: 'log-note', testid: 'logs-empty' });
    this.rows = h('div', { class: 'log-rows', testid: 'log-rows' });
    this.scroller = h('div', { class: 'log-scroll', testid: 'logs-scroll', tabindex: 0 }, this.startNote, this.rows, this.emptyNote);
    this.scroller.addEventListener('scroll', () => this.scrolled(), { passive: true });
    // Rows change height after they are placed (a font arriving, a narrower window rewrapping long lines):
    // following stays at the end.
    this.resizes = new ResizeObserver(() => {
      if (this.following && this.active) this.scrollToEnd();
    });
    this.resizes.observe(this.rows);
    this.resizes.observe(this.scroller);
    this.root = h(
      'section',
      { class: 'logs', testid: 'logs', 'data-run-dir': dir },
      h('div', { class: 'toolbar logs-toolbar' }, this.search, this.streamSelect, this.followBtn, startBtn, this.jumpBtn, h('span', { class: 'spacer' }), this.statusEl),
      this.errorEl,
      this.scroller,
    );
    this.root.dataset.busy = 'false';
    this.renderFollow();
    this.renderNotes();
  }

  // Shown (the first time: the newest lines are fetched; following: what came while hidden) or hidden
  // (events only mark the view stale).
  setActive(active: boolean): void {
    this.active = active;
    if (!active || this.destroyed) return;
    if (!this.loaded && !this.busy) {
      this.restart();
    } else if (this.following) {
      this.scrollToEnd();
      if (this.stale) this.askNewer();
    }
    this.stale = false;
  }

  // A live event for this run (or null: events may have been missed).
  runChanged(e: RunEvent | null): void {
    if (e !== null) {
      // Other changes of the run (samples, its state) leave the output as it was.
      if (e.consoleVersion !== null && e.consoleVersion === this.consoleVersion) return;
      this.consoleVersion = e.consoleVersion;
      if (e.consoleLines !== null && e.consoleLines > this.total) this.total = e.consoleLines;
    }
    this.renderStatus();
    if (!this.active) {
      this.stale = true;
      return;
    }
    if (this.following) this.askNewer();
  }

  destroy(): void {
    this.destroyed = true;
    this.abort?.abort();
    this.resizes.disconnect();
    if (this.followTimer !== null) clearTimeout(this.followTimer);
    if (this.searchTimer !== null) clearTimeout(this.searchTimer);
    this.root.remove();
  }

  // ---- fetching ----

  private restartSoon(): void {
    if (this.searchTimer !== null) clearTimeout(this.searchTimer);
    this.searchTimer = window.setTimeout(() => this.restart(), kSearchDebounceMs);
  }

  // From the newest page again (a new search, a new stream, Follow).
  private restart(): void {
    this.reset(true);
    void this.loadEdge(false);
  }

  // From the oldest line the server holds.
  private toStart(): void {
    this.reset(false);
    void this.loadEdge(true);
  }

  // Whatever is in flight or asked for is forgotten.
  private reset(following: boolean): void {
    if (this.searchTimer !== null) {
      clearTimeout(this.searchTimer);
      this.searchTimer = null;
    }
    this.generation++;
    this.abort?.abort();
    this.abort = null;
    this.busy = false;
    this.pending = false;
    this.following = following;
    this.renderFollow();
  }

  private followEnd(): void {
    if (this.next >= this.total && this.loaded) {
      this.setFollowing(true);
      this.askNewer();
    } else {
      this.restart();
    }
  }

  private async request(query: Query): Promise<ConsolePage | null> {
    const generation = this.generation;
    const ac = new AbortController();
    this.abort = ac;
    this.busy = true;
    this.lastFetch = Date.now();
    this.root.dataset.busy = 'true';
    const stream = this.streamSelect.value as Stream;
    try {
      const page = await fetchConsole(
        this.dir,
        { ...query, limit: kPageLines, q: this.search.value, stream: stream === 'all' ? null : stream },
        ac.signal,
      );
      if (generation !== this.generation || this.destroyed) return null;
      this.errorEl.hidden = true;
      this.first = page.first;
      this.total = Math.max(this.total, page.total);
      this.dropped = page.dropped;
      this.settled = page.settled;
      return page;
    } catch (e) {
      if (isAbort(e) || generation !== this.generation || this.destroyed) return null;
      this.errorEl.textContent = `Could not read the output: ${errorText(e)}`;
      this.errorEl.hidden = false;
      if (!this.loaded) window.setTimeout(() => !this.destroyed && this.active && this.restart(), kRetryMs);
      else if (this.following) window.setTimeout(() => this.askNewer(), kRetryMs);
      return null;
    } finally {
      if (generation === this.generation) {
        this.busy = false;
        this.abort = null;
        this.root.dataset.busy = 'false';
      }
    }
  }

  // The notes and the status as the rows now are (before the view is scrolled: a note changes the height),
  // and what was asked for while a fetch was in flight.
  private settle(): void {
    this.renderNotes();
    this.renderStatus();
    if (this.pending && !this.busy) {
      this.pending = false;
      this.askNewer();
    }
  }

  // The first page of the output, or its last.
  private async loadEdge(oldest: boolean): Promise<void> {
    const generation = this.generation;
    const page = await this.request(oldest ? { after: 0 } : {});
    if (!page) return;
    clear(this.rows);
    this.appendRows(page.lines);
    this.prev = page.prev;
    this.next = page.next;
    this.loaded = true;
    this.settle();
    if (this.following) this.scrollToEnd();
    else this.scroller.scrollTop = 0;
    // A log still being read: more to come.
    if (generation === this.generation && page.loading && this.following) this.askNewer();
  }

  // Newer lines, at most every kFollowMs: from the end of the window, or, at the end of the output, from
  // the first line that may still change.
  private askNewer(): void {
    if (this.destroyed || !this.loaded) return;
    if (!this.active) {
      this.stale = true;
      return;
    }
    if (this.busy) {
      this.pending = true;
      return;
    }
    if (this.followTimer !== null) return;
    const wait = Math.max(0, this.lastFetch + kFollowMs - Date.now());
    this.followTimer = window.setTimeout(() => {
      this.followTimer = null;
      void this.loadNewer();
    }, wait);
  }

  private async loadNewer(): Promise<void> {
    if (this.busy) {
      this.pending = true;
      return;
    }
    if (this.following && this.total - this.next > kMaxRows) return this.restart();
    const atEnd = this.next >= this.total;
    const after = atEnd ? Math.max(this.prev, Math.min(this.next, this.settled)) : this.next;
    const page = await this.request({ after });
    if (!page) return;
    // Rows from `after` on are replaced: those lines may have changed since they were fetched.
    while (rowNumber(this.rows.lastElementChild) >= after) this.rows.lastElementChild!.remove();
    this.appendRows(page.lines);
    this.next = page.next;
    this.trimTop();
    if (page.next < page.total && this.following) this.pending = true;
    this.settle();
    if (this.following) this.scrollToEnd();
  }

  private async loadOlder(): Promise<void> {
    if (this.busy || !this.loaded || this.prev <= this.first) return;
    const page = await this.request({ before: this.prev });
    if (!page) return;
    const height = this.scroller.scrollHeight;
    const top = this.scroller.scrollTop;
    const fragment = document.createDocumentFragment();
    for (const line of page.lines) fragment.appendChild(lineRow(line));
    this.rows.insertBefore(fragment, this.rows.firstChild);
    this.prev = page.prev;
    this.renderNotes();
    // The view stays on the rows it showed (or at the end, following a short output).
    if (this.following) this.scrollToEnd();
    else this.scroller.scrollTop = top + (this.scroller.scrollHeight - height);
    // The window's newest rows go: they are fetched again when scrolled back to.
    let removed = NaN;
    while (this.rows.childElementCount > kMaxRows) {
      removed = rowNumber(this.rows.lastElementChild);
      this.rows.lastElementChild!.remove();
    }
    if (!Number.isNaN(removed)) {
      this.next = removed;
      this.setFollowing(false);
    }
    this.settle();
  }

  // ---- rows and scrolling ----

  private appendRows(lines: ConsoleLine[]): void {
    const fragment = document.createDocumentFragment();
    for (const line of lines) fragment.appendChild(lineRow(line));
    this.rows.appendChild(fragment);
  }

  // The window's oldest rows go when it holds more than kMaxRows; the view stays on what it showed.
  private trimTop(): void {
    const excess = this.rows.childElementCount - kMaxRows;
    if (excess <= 0) return;
    const height = this.scroller.scrollHeight;
    for (let i = 0; i < excess; i++) this.rows.firstElementChild!.remove();
    this.prev = rowNumber(this.rows.firstElementChild);
    this.renderNotes();
    if (!this.following) this.scroller.scrollTop -= height - this.scroller.scrollHeight;
  }

  private distanceToBottom(): number {
    return this.scroller.scrollHeight - this.scroller.scrollTop - this.scroller.clientHeight;
  }

  private scrollToEnd(): void {
    this.scroller.scrollTop = this.scroller.scrollHeight;
    this.pinnedTop = this.scroller.scrollTop;
  }

  private scrolled(): void {
    if (!this.loaded) return;
    const top = this.scroller.scrollTop;
    if (this.following && top < this.pinnedTop - 1) this.setFollowing(false);
    if (top < kEdgePx && this.prev > this.first) void this.loadOlder();
    const below = this.distanceToBottom();
    if (this.following || below > kEdgePx) return;
    if (this.next < this.total) {
      void this.loadNewer();
    } else if (below < kEndPx && !this.busy) {
      this.setFollowing(true);
      this.askNewer();
    }
  }

  private setFollowing(on: boolean): void {
    this.following = on;
    if (on) this.scrollToEnd();
    this.renderFollow();
    this.renderStatus();
  }

  // ---- text ----

  private renderFollow(): void {
    this.followBtn.setAttribute('aria-pressed', String(this.following));
    this.root.dataset.following = String(this.following);
  }

  private renderNotes(): void {
    const atStart = this.loaded && this.prev <= this.first;
    this.startNote.textContent =
      this.first > 0 ? `The first ${this.first.toLocaleString()} lines are no longer held by the server.` : 'Start of the output.';
    const empty = this.loaded && this.rows.childElementCount === 0;
    this.emptyNote.hidden = !empty;
    this.emptyNote.textContent = this.total === 0 ? 'No console output recorded.' : 'No lines match.';
    this.startNote.hidden = !atStart || empty;
  }

  private renderStatus(): void {
    const filtered = this.search.value !== '' || this.streamSelect.value !== 'all';
    const parts = [`${this.total.toLocaleString()} lines`];
    if (filtered) parts.push(`${this.rows.childElementCount.toLocaleString()} matching shown`);
    if (this.dropped > 0) parts.push(`${this.dropped.toLocaleString()} oldest not kept`);
    this.statusEl.textContent = parts.join(' · ');
    this.jumpBtn.hidden = this.following || this.next >= this.total;
  }
}
