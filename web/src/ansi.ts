// A console line for display (the Logs tab), read by leet's rules (src/tui/ansi_text.hpp) so that both show
// a line alike: SGR colours and weights become spans (foreground 30–37, 90–97, 38;5;N and 38;2;R;G;B, 39
// the default; 1 bold, 2 dim, 22 normal, 0 reset; backgrounds are read past, not applied, so text stays
// readable); every other escape sequence (cursor moves, screen clears, OSC titles and hyperlinks, DCS, APC
// and PM strings, two-byte escapes) is dropped, as the server drops them when it searches (`q`). A command
// may print anything, so what could still act on the page or hide text is made visible instead: control
// characters become the Control Pictures (U+2400–U+241F, ␡ for DEL; a tab stays a tab), C1 controls and
// bidirectional overrides U+FFFD. Pure (no DOM): the page turns the spans into text nodes.

export interface AnsiSpan {
  text: string;
  bold: boolean;
  dim: boolean;
  // 0–15: a colour of the terminal palette (drawn by a CSS class, per theme); null: the default colour.
  palette: number | null;
  // '#rrggbb' for the 256-colour palette's 16–255 and 24-bit colours; null otherwise.
  color: string | null;
}

type Style = Omit<AnsiSpan, 'text'>;

const kPlain: Style = { bold: false, dim: false, palette: null, color: null };
const kMaxParameters = 32;

// Characters that would act or hide text: C0 but tab, DEL, C1, the bidirectional embeddings, overrides
// and isolates.
const kUnsafe = /[\x00-\x08\x0a-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]/g;

export function visibleText(text: string): string {
  return text.replace(kUnsafe, (c) => {
    const code = c.charCodeAt(0);
    if (code < 0x20) return String.fromCharCode(0x2400 + code);
    if (code === 0x7f) return '\u2421';
    return '\ufffd';
  });
}

function hex2(v: number): string {
  return Math.max(0, Math.min(255, v)).toString(16).padStart(2, '0');
}

// xterm's colours 16–255: a 6×6×6 cube, then 24 greys.
function paletteColor(n: number): string {
  if (n >= 232) {
    const g = 8 + 10 * (n - 232);
    return `#${hex2(g)}${hex2(g)}${hex2(g)}`;
  }
  const levels = [0, 95, 135, 175, 215, 255];
  const i = n - 16;
  return `#${hex2(levels[Math.floor(i / 36)])}${hex2(levels[Math.floor(i / 6) % 6])}${hex2(levels[i % 6])}`;
}

function parameters(text: string): number[] {
  const values: number[] = [];
  for (const part of text.split(/[;:]/)) {
    if (values.length >= kMaxParameters) break;
    values.push(part === '' ? 0 : /^[0-9]{1,9}$/.test(part) ? Number(part) : -1);
  }
  return values;
}

function applySgr(text: string, style: Style): Style {
  const s = { ...style };
  const values = parameters(text);
  for (let i = 0; i < values.length; i++) {
    const v = values[i];
    if (v === 0) {
      Object.assign(s, kPlain);
    } else if (v === 1) {
      s.bold = true;
      s.dim = false;
    } else if (v === 2) {
      s.dim = true;
      s.bold = false;
    } else if (v === 22) {
      s.bold = false;
      s.dim = false;
    } else if (v >= 30 && v <= 37) {
      s.palette = v - 30;
      s.color = null;
    } else if (v >= 90 && v <= 97) {
      s.palette = v - 90 + 8;
      s.color = null;
    } else if (v === 39) {
      s.palette = null;
      s.color = null;
    } else if ((v === 38 || v === 48) && i + 1 < values.length) {
      // Extended colours: 5;N or 2;R;G;B. Backgrounds are read past, not applied.
      let palette: number | null = null;
      let color: string | null = null;
      if (values[i + 1] === 5 && i + 2 < values.length) {
        const n = values[i + 2];
        if (n >= 0 && n < 16) palette = n;
        else if (n >= 16 && n <= 255) color = paletteColor(n);
        i += 2;
      } else if (values[i + 1] === 2 && i + 4 < values.length) {
        const [r, g, b] = values.slice(i + 2, i + 5);
        if (r >= 0 && g >= 0 && b >= 0) color = `#${hex2(r)}${hex2(g)}${hex2(b)}`;
        i += 4;
      } else {
        i += 1;
      }
      if (v === 38 && (palette !== null || color !== null)) {
        s.palette = palette;
        s.color = color;
      }
    }
  }
  return s;
}

function sameStyle(a: Style, b: Style): boolean {
  return a.bold === b.bold && a.dim === b.dim && a.palette === b.palette && a.color === b.color;
}

export function parseAnsi(line: string): AnsiSpan[] {
  const spans: AnsiSpan[] = [];
  let style: Style = kPlain;
  const put = (text: string) => {
    if (text === '') return;
    const last = spans[spans.length - 1];
    if (last && sameStyle(last, style)) last.text += visibleText(text);
    else spans.push({ text: visibleText(text), ...style });
  };
  let i = 0;
  while (i < line.length) {
    const esc = line.indexOf('\x1b', i);
    if (esc < 0) {
      put(line.slice(i));
      break;
    }
    put(line.slice(i, esc));
    if (esc + 1 >= line.length) break; // a lone ESC at the end
    const kind = line[esc + 1];
    if (kind === '[') {
      // CSI: parameter and intermediate bytes 0x20–0x3F, then a final byte 0x40–0x7E.
      let end = esc + 2;
      while (end < line.length && line.charCodeAt(end) >= 0x20 && line.charCodeAt(end) <= 0x3f) end++;
      const final = end < line.length ? line.charCodeAt(end) : -1;
      if (final >= 0x40 && final <= 0x7e) {
        if (line[end] === 'm') style = applySgr(line.slice(esc + 2, end), style);
        i = end + 1;
      } else {
        i = end; // a broken sequence: dropped up to what ended it
      }
    } else if (kind === ']' || kind === 'P' || kind === '_' || kind === '^') {
      // OSC, DCS, APC, PM: up to BEL or ESC \ (or the end of the line).
      let end = esc + 2;
      while (end < line.length && line[end] !== '\x07' && !(line[end] === '\x1b' && line[end + 1] === '\\')) end++;
      i = end >= line.length ? end : end + (line[end] === '\x07' ? 1 : 2);
    } else {
      i = esc + 2; // a two-byte escape (ESC 7, ESC =, ...)
    }
  }
  return spans;
}
