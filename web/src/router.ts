// Hash routing, so the server only ever serves index.html: #/ (the runs table, with its state in the
// hash's query) and #/runs/<dir>[,<dir>...] (a workspace). Directory names are URI-encoded one by one,
// so a comma inside a name cannot split it.

export interface Page {
  root: HTMLElement;
  title: string;
  destroy(): void;
}

export type Route =
  | { kind: 'runs'; query: URLSearchParams }
  | { kind: 'workspace'; dirs: string[] }
  | { kind: 'missing'; hash: string };

export function runsHash(dirs: string[]): string {
  return '#/runs/' + dirs.map(encodeURIComponent).join(',');
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
    const dirs: string[] = [];
    for (const part of h.slice('/runs/'.length).split(',')) {
      const d = decode(part);
      if (d && !dirs.includes(d)) dirs.push(d);
    }
    if (dirs.length > 0) return { kind: 'workspace', dirs };
  }
  return { kind: 'missing', hash: h };
}
