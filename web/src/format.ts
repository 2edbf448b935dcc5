// Number, unit, time and duration formatting, following the terminal UI's conventions
// (src/tui/value_format.cpp): byte units scale by 1024, counts and unit-less values take k/M/G suffixes,
// "%" sticks to the number, other units follow after a space.

const kByteUnits = ['B', 'KiB', 'MiB', 'GiB', 'TiB', 'PiB'];
const kSuffixes = ['', 'k', 'M', 'G', 'T', 'P', 'E'];

// A number with about four significant digits, no exponent for ordinary magnitudes.
export function formatNumber(v: number): string {
  if (!Number.isFinite(v)) return String(v);
  if (v === 0) return '0';
  const a = Math.abs(v);
  if (a < 1e-4) return v.toExponential(2);
  const decimals = a >= 1000 ? 0 : a >= 100 ? 1 : a >= 10 ? 2 : a >= 1 ? 3 : Math.min(7, 3 - Math.floor(Math.log10(a)));
  return stripZeros(v.toFixed(decimals));
}

function stripZeros(s: string): string {
  return s.includes('.') ? s.replace(/\.?0+$/, '') : s;
}

interface UnitParts {
  base: string;
  rate: string;
}

function splitUnit(unit: string): UnitParts {
  if (unit.length > 2 && unit.endsWith('/s')) return { base: unit.slice(0, -2), rate: '/s' };
  return { base: unit, rate: '' };
}

function byteIndex(base: string): number {
  if (base === 'bytes' || base === 'B') return 0;
  return kByteUnits.indexOf(base);
}

type Scaler = { divisor: number; suffix: string };

// The display scaling for values of magnitude `mag` in `unit`.
function scalerFor(mag: number, unit: string): Scaler {
  const { base, rate } = splitUnit(unit);
  const bi = byteIndex(base);
  if (bi >= 0) {
    let index = bi;
    let divisor = 1;
    let m = mag;
    while (index > 0 && m !== 0 && m < 1) {
      m *= 1024;
      divisor /= 1024;
      index--;
    }
    while (index + 1 < kByteUnits.length && m >= 1024) {
      m /= 1024;
      divisor *= 1024;
      index++;
    }
    return { divisor, suffix: ` ${kByteUnits[index]}${rate}` };
  }
  if (base === 'count' || unit === '') {
    let index = 0;
    let divisor = 1;
    while (index + 1 < kSuffixes.length && mag / divisor >= 1000) {
      divisor *= 1000;
      index++;
    }
    return { divisor, suffix: `${kSuffixes[index]}${rate}` };
  }
  if (unit === '%') return { divisor: 1, suffix: '%' };
  if (mag >= 10000) {
    let index = 0;
    let divisor = 1;
    while (index + 1 < kSuffixes.length && mag / divisor >= 1000) {
      divisor *= 1000;
      index++;
    }
    return { divisor, suffix: `${kSuffixes[index]} ${unit}` };
  }
  return { divisor: 1, suffix: ` ${unit}` };
}

// One value with its unit, e.g. for the legend: "1.5 GiB", "87%", "250 W", "12.3k".
export function formatValue(v: number | null | undefined, unit: string): string {
  if (v === null || v === undefined) return '–';
  if (!Number.isFinite(v)) return String(v);
  const s = scalerFor(Math.abs(v), unit);
  return formatNumber(v / s.divisor) + s.suffix;
}

// Axis tick labels: one scaling for all ticks (chosen from the largest), decimals from the tick spacing.
export function formatTicks(splits: number[], unit: string): string[] {
  const finite = splits.filter((v) => Number.isFinite(v));
  if (finite.length === 0) return splits.map(() => '');
  const mag = Math.max(...finite.map(Math.abs));
  const s = scalerFor(mag, unit);
  let incr = 0;
  for (let i = 1; i < finite.length; i++) {
    const d = Math.abs(finite[i] - finite[i - 1]);
    if (d > 0 && (incr === 0 || d < incr)) incr = d;
  }
  const scaledIncr = incr / s.divisor;
  const decimals = scaledIncr > 0 ? Math.max(0, Math.min(8, Math.ceil(-Math.log10(scaledIncr) - 1e-9))) : 2;
  const suffix = s.suffix.trim() === '' ? '' : s.suffix;
  return splits.map((v) => (Number.isFinite(v) ? stripZeros((v / s.divisor).toFixed(decimals)) + suffix : ''));
}

// "3.7s", "45.2s", "2m 05s", "1h 02m", "3d 04h": truncated like a clock; under a minute to the tenth of a
// second, as the terminal UI shows runtimes (src/tui/value_format.cpp).
export function formatDuration(seconds: number | null | undefined): string {
  if (seconds === null || seconds === undefined || !Number.isFinite(seconds)) return '–';
  if (seconds < 0) return '-' + formatDuration(-seconds);
  const tenths = Math.floor(seconds * 10 + 1e-6);
  if (tenths < 600) return stripZeros((tenths / 10).toFixed(1)) + 's';
  const s = Math.floor(seconds + 1e-6);
  const pad = (n: number) => String(n).padStart(2, '0');
  if (s < 3600) return `${Math.floor(s / 60)}m ${pad(s % 60)}s`;
  if (s < 86400) return `${Math.floor(s / 3600)}h ${pad(Math.floor((s % 3600) / 60))}m`;
  return `${Math.floor(s / 86400)}d ${pad(Math.floor((s % 86400) / 3600))}h`;
}

// Relative-time axis ticks (seconds since the run's start): "0s", "30s", "1m", "1m30s", "2h", "1d6h".
export function formatRelTick(seconds: number, incr: number): string {
  if (!Number.isFinite(seconds)) return '';
  const neg = seconds < 0;
  let s = Math.abs(seconds);
  if (incr < 1) {
    const decimals = Math.max(0, Math.min(3, Math.ceil(-Math.log10(incr) - 1e-9)));
    if (s < 60) return (neg ? '-' : '') + stripZeros(s.toFixed(decimals)) + 's';
  }
  s = Math.round(s);
  const d = Math.floor(s / 86400);
  const hh = Math.floor((s % 86400) / 3600);
  const mm = Math.floor((s % 3600) / 60);
  const ss = s % 60;
  let out = '';
  if (d) out += `${d}d`;
  if (hh) out += `${hh}h`;
  if (mm) out += `${mm}m`;
  if (ss || out === '') out += `${ss}s`;
  return (neg ? '-' : '') + out;
}

// Tick increments for a relative-time axis, in seconds.
export const kRelTimeIncrs = [
  0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600,
  7200, 10800, 21600, 43200, 86400, 172800, 604800, 1209600, 2592000,
];

const pad2 = (n: number) => String(n).padStart(2, '0');

// Local time "2026-11-29 19:45:00".
export function formatTime(epochSeconds: number | null | undefined): string {
  if (epochSeconds === null || epochSeconds === undefined || !Number.isFinite(epochSeconds)) return '–';
  const d = new Date(epochSeconds * 1000);
  return (
    `${d.getFullYear()}-${pad2(d.getMonth() + 1)}-${pad2(d.getDate())} ` +
    `${pad2(d.getHours())}:${pad2(d.getMinutes())}:${pad2(d.getSeconds())}`
  );
}

// Local time of day "19:45:00" (a console line's time).
export function formatClock(epochSeconds: number | null | undefined): string {
  if (epochSeconds === null || epochSeconds === undefined || !Number.isFinite(epochSeconds)) return '--:--:--';
  const d = new Date(epochSeconds * 1000);
  return `${pad2(d.getHours())}:${pad2(d.getMinutes())}:${pad2(d.getSeconds())}`;
}

// Legend text for an x value.
export function formatX(v: number | null | undefined, xAxis: string, wall: boolean): string {
  if (v === null || v === undefined || !Number.isFinite(v)) return '–';
  if (xAxis === 'step') return `step ${Math.round(v)}`;
  if (wall) return formatTime(v);
  return formatDuration(v);
}

// Tick increments for byte units (values in B, KiB, MiB...): round in powers of 1024, so ticks read
// "512 MiB", "1 GiB", "1.5 GiB" rather than "18.6 GiB".
export const kByteIncrs: number[] = (() => {
  const out: number[] = [];
  for (let p = -3; p <= 6; p++) {
    for (const m of [1, 2, 5, 10, 25, 50, 100, 250, 512]) out.push(m * 1024 ** p);
  }
  return out;
})();

export function isByteUnit(unit: string): boolean {
  return byteIndex(splitUnit(unit).base) >= 0;
}

// Wall-clock axis ticks in local 24-hour time; the date is added under a tick where the day changes.
export function formatWallTicks(splits: number[], incr: number): string[] {
  let prevDay = '';
  return splits.map((v) => {
    if (!Number.isFinite(v)) return '';
    const d = new Date(v * 1000);
    const day = `${d.getFullYear()}-${pad2(d.getMonth() + 1)}-${pad2(d.getDate())}`;
    if (incr >= 86400) return day;
    const hm = `${pad2(d.getHours())}:${pad2(d.getMinutes())}`;
    const time = incr < 60 ? `${hm}:${pad2(d.getSeconds())}` : hm;
    const withDay = day !== prevDay ? `${time}\n${day.slice(5)}` : time;
    prevDay = day;
    return withDay;
  });
}
