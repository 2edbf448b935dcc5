// Server-sent events from /api/events: `runs` (the list changed) and `run` (a watched run grew or changed
// state, with its console's line count and version). EventSource reconnects by itself; the status callback
// drives the "live" indicator.

export interface RunEvent {
  dir: string;
  samples: number | null;
  state: string;
  consoleLines: number | null; // console lines written so far
  consoleVersion: number | null; // changes whenever a console line is added or changed
}

export interface EventHandlers {
  runs?: () => void;
  run?: (e: RunEvent) => void;
  status?: (connected: boolean) => void;
}

export class EventStream {
  private es: EventSource | null;

  constructor(url: string, handlers: EventHandlers) {
    this.es = new EventSource(url, { withCredentials: false });
    this.es.addEventListener('open', () => handlers.status?.(true));
    this.es.addEventListener('error', () => handlers.status?.(false));
    this.es.addEventListener('runs', () => handlers.runs?.());
    this.es.addEventListener('run', (ev) => {
      let data: unknown = null;
      try {
        data = JSON.parse((ev as MessageEvent<string>).data);
      } catch {
        return;
      }
      if (typeof data !== 'object' || data === null) return;
      const o = data as Record<string, unknown>;
      if (typeof o.dir !== 'string') return;
      handlers.run?.({
        dir: o.dir,
        samples: typeof o.samples === 'number' ? o.samples : null,
        state: typeof o.state === 'string' ? o.state : '',
        consoleLines: typeof o.console_lines === 'number' ? o.console_lines : null,
        consoleVersion: typeof o.console_version === 'number' ? o.console_version : null,
      });
    });
  }

  close(): void {
    this.es?.close();
    this.es = null;
  }
}
