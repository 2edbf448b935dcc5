// Hash routing, so the server only ever serves index.html: #/ (the runs table, with its state in the
// hash's query), #/runs/<dir>[,<dir>...] (a workspace, its tab in the query: #/runs/<dir>?tab=logs), #/jobs
// (the jobs list) and #/jobs/<id> (a job's nodes in one view, with its metric and view in the query:
// #/jobs/4711?key=gpu.0.gpu&view=nodes). Directory names and job ids are URI-encoded, so a comma or "?"
// inside one cannot split it.

export interface Page {
  root: HTMLElement;
  title: string;
  destroy(): void;
}

export type Route =
  | { kind: 'runs'; query: URLSearchParams }
  | { kind: 'workspace'; dirs: string[]; query: URLSearchParams }
  | { kind: 'jobs' }
  | { kind: 'job'; id: string; query: URLSearchParams }
  | { kind: 'missing'; hash: string };

export function runsHash(dirs: string[], query?: URLSearchParams): string {
  const qs = query?.toString() ?? '';
  return '#/runs/' + dirs.map(encodeURIComponent).join(',') + (qs ? `?${qs}` : '');
}

export function jobHash(id: string, query?: URLSearchParams): string {
  const qs = query?.toString() ?? '';
  return '#/jobs/' + encodeURIComponent(id) + (qs ? `?${qs}` : '');
}

function decode(s: string): string | null {
  try {
    return decodeURIComponent(s);
  } catch {
    return null;
  }
}

export function parseRoute(hash: string): Route {
  const h = hash.startsWith('#') ? hash.slice(1) : hash;
  if (h === '' || h === '/') return { kind: 'runs', query: new URLSearchParams() };
  if (h.startsWith('/?')) return { kind: 'runs', query: new URLSearchParams(h.slice(2)) };
  if (h.startsWith('/runs/')) {
    const rest = h.slice('/runs/'.length);
    const q = rest.indexOf('?');
    const dirs: string[] = [];
    for (const part of (q < 0 ? rest : rest.slice(0, q)).split(',')) {
      const d = decode(part);
      if (d && !dirs.includes(d)) dirs.push(d);
    }
    if (dirs.length > 0) return { kind: 'workspace', dirs, query: new URLSearchParams(q < 0 ? '' : rest.slice(q + 1)) };
  }
  if (h === '/jobs' || h === '/jobs/') return { kind: 'jobs' };
  if (h.startsWith('/jobs/')) {
    const rest = h.slice('/jobs/'.length);
    const q = rest.indexOf('?');
    const id = decode(q < 0 ? rest : rest.slice(0, q));
    if (id) return { kind: 'job', id, query: new URLSearchParams(q < 0 ? '' : rest.slice(q + 1)) };
  }
  return { kind: 'missing', hash: h };
}
