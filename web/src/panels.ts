// User panels: charts of picked metric keys or of a regular expression over keys, shown above the System
// section. The layout is per logdir (GET/PUT /api/layout) and is saved after every change; saves are
// serialized so an older layout can never overwrite a newer one.

import { errorText, fetchLayout, type Layout, type Panel, saveLayout } from './api';
import { ChartView, type ChartHost } from './chart';
import { button, h, replaceChildren } from './dom';
import { toast } from './widgets';

const kMaxPanels = 100;
const kMaxKeys = 100;
const kMaxTitle = 200;
const kMaxMatch = 1024;
const kMaxListed = 500;

function newPanelId(existing: Panel[]): string {
  for (;;) {
    const id = 'p' + Date.now().toString(36) + Math.random().toString(36).slice(2, 6);
    if (!existing.some((p) => p.id === id)) return id;
  }
}

export function panelTitle(p: Panel): string {
  if (p.title) return p.title;
  if (p.match) return `/${p.match}/`;
  return p.keys.join(', ');
}

export class Panels {
  readonly section: HTMLElement;
  private readonly grid: HTMLElement;
  private readonly formSlot: HTMLElement;
  private readonly statusEl: HTMLElement;
  private layout: Layout = { version: 1, panels: [] };
  private readonly views = new Map<string, ChartView>();
  private loaded = false;
  private dirty = false;
  private saving = false;
  private form: HTMLFormElement | null = null;

  constructor(
    private readonly host: ChartHost,
    private readonly allKeys: () => string[],
  ) {
    this.grid = h('div', { class: 'chart-grid', testid: 'panels-grid' });
    this.formSlot = h('div', { class: 'form-slot' });
    this.statusEl = h('div', { class: 'status', testid: 'panels-status' });
    this.section = h(
      'section',
      { class: 'section', testid: 'panels-section' },
      h('h2', { class: 'section-title' }, 'Panels'),
      this.formSlot,
      this.statusEl,
      this.grid,
    );
    this.updateVisibility();
  }

  // Resolves true once the stored layout is read; until then nothing may be added (a save would
  // overwrite panels not read yet).
  async load(): Promise<boolean> {
    try {
      this.layout = await fetchLayout();
      this.loaded = true;
      replaceChildren(this.statusEl);
    } catch (e) {
      this.loaded = false;
      replaceChildren(this.statusEl, h('div', { class: 'error' }, `Could not load the panels: ${errorText(e)}`));
      this.updateVisibility(true);
      return false;
    }
    this.sync();
    return true;
  }

  // Live update of every panel (each throttled to once a second).
  refresh(): void {
    for (const v of this.views.values()) v.refresh();
  }

  timeModeChanged(): void {
    for (const v of this.views.values()) v.timeModeChanged();
  }

  themeChanged(): void {
    for (const v of this.views.values()) v.themeChanged();
  }

  destroy(): void {
    for (const v of this.views.values()) v.destroy();
    this.views.clear();
  }

  // Views follow the layout: new ones made, removed ones destroyed, all in layout order.
  private sync(): void {
    const ids = new Set(this.layout.panels.map((p) => p.id));
    for (const [id, v] of this.views) {
      if (!ids.has(id)) {
        v.destroy();
        this.views.delete(id);
      }
    }
    const fresh: ChartView[] = [];
    this.layout.panels.forEach((p, i) => {
      let v = this.views.get(p.id);
      if (!v) {
        v = this.makeView(p);
        this.views.set(p.id, v);
        fresh.push(v);
      }
      const at = this.grid.children[i];
      if (at !== v.root) this.grid.insertBefore(v.root, at ?? null);
      const root = v.root;
      root.querySelector<HTMLButtonElement>('[data-testid="panel-up"]')!.disabled = i === 0;
      root.querySelector<HTMLButtonElement>('[data-testid="panel-down"]')!.disabled = i === this.layout.panels.length - 1;
    });
    this.updateVisibility();
    for (const v of fresh) v.start();
  }

  private updateVisibility(force = false): void {
    this.section.hidden = !force && this.layout.panels.length === 0 && this.form === null && this.statusEl.childNodes.length === 0;
  }

  private makeView(p: Panel): ChartView {
    const controls = [
      button('↑', { class: 'btn btn-small', testid: 'panel-up', title: 'Move up' }, () => this.move(p.id, -1)),
      button('↓', { class: 'btn btn-small', testid: 'panel-down', title: 'Move down' }, () => this.move(p.id, 1)),
      button('✕', { class: 'btn btn-small btn-danger', testid: 'panel-remove', title: 'Remove panel' }, () => this.remove(p.id)),
    ];
    return new ChartView(
      {
        id: p.id,
        kind: 'panel',
        title: panelTitle(p),
        unit: '',
        xAxis: 'time',
        query: p.match ? { match: p.match } : { keys: p.keys.join(',') },
        controls,
      },
      this.host,
    );
  }

  private move(id: string, delta: number): void {
    const panels = this.layout.panels;
    const i = panels.findIndex((p) => p.id === id);
    const j = i + delta;
    if (i < 0 || j < 0 || j >= panels.length) return;
    [panels[i], panels[j]] = [panels[j], panels[i]];
    this.sync();
    this.persist();
  }

  private remove(id: string): void {
    this.layout.panels = this.layout.panels.filter((p) => p.id !== id);
    this.sync();
    this.persist();
  }

  private add(p: Panel): void {
    this.layout.panels.push(p);
    this.sync();
    this.persist();
  }

  private persist(): void {
    this.dirty = true;
    if (!this.saving) void this.saveLoop();
  }

  private async saveLoop(): Promise<void> {
    this.saving = true;
    while (this.dirty) {
      this.dirty = false;
      try {
        await saveLayout(this.layout);
      } catch (e) {
        toast(`Could not save the panels: ${errorText(e)}`, true);
      }
    }
    this.saving = false;
  }

  // ---- the "Add panel" form ----

  openForm(): void {
    if (!this.loaded) return;
    if (this.form) {
      this.form.querySelector<HTMLInputElement>('[data-testid="panel-key-search"]')?.focus();
      return;
    }
    const keys = this.allKeys();
    const picked = new Set<string>();
    const title = h('input', { type: 'text', testid: 'panel-title-input', maxlength: kMaxTitle, placeholder: 'Title (optional)' });
    const search = h('input', { type: 'search', testid: 'panel-key-search', placeholder: `Search ${keys.length} keys` });
    const list = h('div', { class: 'key-list', testid: 'panel-key-list', role: 'group', 'aria-label': 'Metric keys' });
    const pickedEl = h('div', { class: 'muted', testid: 'panel-key-count' });
    const match = h('input', { type: 'text', testid: 'panel-match-input', maxlength: kMaxMatch, placeholder: 'e.g. temp|power', spellcheck: 'false' });
    const matchInfo = h('div', { class: 'muted', testid: 'panel-match-preview' });
    const errorEl = h('div', { class: 'error', testid: 'panel-form-error', role: 'alert' });
    const submit = h('button', { type: 'submit', class: 'btn btn-primary', testid: 'panel-add-submit' }, 'Add panel');
    const cancel = button('Cancel', { class: 'btn', testid: 'panel-add-cancel' }, () => this.closeForm());

    const renderPicked = () => {
      pickedEl.textContent = `${picked.size} selected`;
    };
    const renderList = () => {
      const needle = search.value.trim().toLowerCase();
      const shown = needle ? keys.filter((k) => k.toLowerCase().includes(needle)) : keys;
      const rows = shown.slice(0, kMaxListed).map((k) => {
        const box = h('input', { type: 'checkbox' });
        box.checked = picked.has(k);
        box.addEventListener('change', () => {
          if (box.checked) picked.add(k);
          else picked.delete(k);
          renderPicked();
        });
        return h('label', { class: 'key-option', testid: 'panel-key-option', 'data-key': k }, box, h('span', { class: 'mono' }, k));
      });
      replaceChildren(list, ...rows);
      if (shown.length > kMaxListed) list.appendChild(h('div', { class: 'muted' }, `${shown.length - kMaxListed} more: refine the search`));
      if (shown.length === 0) list.appendChild(h('div', { class: 'muted' }, keys.length ? 'No key matches' : 'No keys known yet'));
    };
    const renderMatch = () => {
      const m = match.value;
      if (!m) {
        matchInfo.textContent = 'Used instead of the picked keys when set.';
        return;
      }
      try {
        const re = new RegExp(m, 'i');
        const n = keys.filter((k) => re.test(k)).length;
        matchInfo.textContent = `Matches ${n} of the known keys.`;
      } catch {
        matchInfo.textContent = 'Not a valid regular expression here (the server uses RE2).';
      }
    };
    search.addEventListener('input', renderList);
    match.addEventListener('input', renderMatch);

    const form = h(
      'form',
      { class: 'panel-form', testid: 'add-panel-form' },
      h('div', { class: 'form-row' }, h('label', null, 'Title', title)),
      h(
        'div',
        { class: 'form-cols' },
        h('div', { class: 'form-col' }, h('label', null, 'Metric keys', search), list, pickedEl),
        h(
          'div',
          { class: 'form-col' },
          h('label', null, 'Or a regular expression over keys', match),
          matchInfo,
          h('div', { class: 'muted' }, 'RE2 syntax, case-insensitive, unanchored.'),
        ),
      ),
      errorEl,
      h('div', { class: 'form-actions' }, submit, cancel),
    );
    form.addEventListener('submit', (e) => {
      e.preventDefault();
      const m = match.value.trim();
      const chosen = [...picked];
      let err = '';
      if (this.layout.panels.length >= kMaxPanels) err = `At most ${kMaxPanels} panels.`;
      else if (!m && chosen.length === 0) err = 'Pick at least one key or type a regular expression.';
      else if (!m && chosen.length > kMaxKeys) err = `At most ${kMaxKeys} keys per panel.`;
      else if (!m && chosen.some((k) => k.includes(','))) err = 'A key with a comma cannot be picked; use a regular expression.';
      else if (m) {
        try {
          new RegExp(m, 'i');
        } catch {
          err = 'Not a valid regular expression.';
        }
      }
      if (err) {
        errorEl.textContent = err;
        return;
      }
      const panel: Panel = {
        id: newPanelId(this.layout.panels),
        title: title.value.trim().slice(0, kMaxTitle),
        keys: m ? [] : chosen,
        match: m,
      };
      this.closeForm();
      this.add(panel);
    });
    form.addEventListener('keydown', (e) => {
      if (e.key === 'Escape') this.closeForm();
    });

    renderList();
    renderPicked();
    renderMatch();
    this.form = form;
    this.formSlot.appendChild(form);
    this.updateVisibility();
    search.focus();
  }

  closeForm(): void {
    this.form?.remove();
    this.form = null;
    this.updateVisibility(!this.loaded);
  }
}
