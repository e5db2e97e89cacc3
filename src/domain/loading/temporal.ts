// Parsing of the date and datetime property types. Values are kept as normalised text so that
// SQLite (text) and PostgreSQL (date / timestamp) store exactly the same thing.

// ISO 8601 extended format: a date, optionally a time (seconds and fraction optional) with an
// optional zone (Z, ±HH, ±HHMM, ±HH:MM). A space may stand for the T, as many exporters write it.
const DATETIME =
  /^(\d{4})-(\d{2})-(\d{2})(?:[Tt ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d{1,9}))?)?(?:([Zz])|([+-])(\d{2})(?::?(\d{2}))?)?)?$/;

const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

function isLeapYear(y: number): boolean {
  return y % 4 === 0 && (y % 100 !== 0 || y % 400 === 0);
}

/** True when year, month (1-12) and day form a real calendar date in years 1 to 9999. */
export function isCalendarDate(y: number, m: number, d: number): boolean {
  if (y < 1 || m < 1 || m > 12 || d < 1) return false;
  const days = m === 2 && isLeapYear(y) ? 29 : (DAYS_IN_MONTH[m - 1] ?? 0);
  return d <= days;
}

/** The value of the two decimal digits at text[i], or -1 when they are not digits. */
function two(text: string, i: number): number {
  const a = text.charCodeAt(i) - 0x30;
  const b = text.charCodeAt(i + 1) - 0x30;
  return a >= 0 && a <= 9 && b >= 0 && b <= 9 ? a * 10 + b : -1;
}

/** True when text[0, 10) is `YYYY-MM-DD` naming a real date; read by hand, as regexes cost 3x. */
function isDateAt(text: string): boolean {
  if (text.charCodeAt(4) !== 0x2d || text.charCodeAt(7) !== 0x2d) return false;
  const hi = two(text, 0);
  const lo = two(text, 2);
  return hi >= 0 && lo >= 0 && isCalendarDate(hi * 100 + lo, two(text, 5), two(text, 8));
}

/** `YYYY-MM-DD` text when it names a real date, else undefined. */
export function parseDate(text: string): string | undefined {
  return text.length === 10 && isDateAt(text) ? text : undefined;
}

/** The common `YYYY-MM-DDTHH:MM:SS[.fraction][Z]` shape read by hand; undefined for any other. */
function fastDatetime(text: string): string | undefined {
  const length = text.length;
  if (length < 19 || !isDateAt(text)) return undefined;
  const t = text.charCodeAt(10);
  if (t !== 0x54 && t !== 0x20) return undefined; // 'T' or ' '
  if (text.charCodeAt(13) !== 0x3a || text.charCodeAt(16) !== 0x3a) return undefined;
  const h = two(text, 11);
  const mi = two(text, 14);
  const s = two(text, 17);
  if (h < 0 || h > 23 || mi < 0 || mi > 59 || s < 0 || s > 59) return undefined;
  const end = text.charCodeAt(length - 1) === 0x5a ? length - 1 : length; // 'Z'
  let micros = '000000';
  if (end > 19) {
    const fraction = end - 20;
    if (text.charCodeAt(19) !== 0x2e || fraction < 1 || fraction > 9 || !allDigits(text, 20, end))
      return undefined;
    micros = fraction === 6 ? text.slice(20, 26) : text.slice(20, Math.min(end, 26)).padEnd(6, '0');
  }
  // Already in the stored form (the usual case for exports of this service): no new string.
  if (end === 26 && t === 0x54) return end === length ? text : text.slice(0, 26);
  return `${text.slice(0, 10)}T${text.slice(11, 19)}.${micros}`;
}

function allDigits(text: string, from: number, to: number): boolean {
  for (let i = from; i < to; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x30 || c > 0x39) return false;
  }
  return true;
}

const pad2 = (n: number): string => (n < 10 ? `0${n}` : String(n));

/**
 * An ISO 8601 date-time as UTC text `YYYY-MM-DDTHH:MM:SS.ffffff`, else undefined. A value without
 * a zone is taken as UTC; fractions beyond microseconds are truncated; a bare date is midnight.
 */
export function parseDatetime(text: string): string | undefined {
  const fast = fastDatetime(text);
  if (fast !== undefined) return fast;
  const m = DATETIME.exec(text);
  if (m === null) return undefined;
  const [, ys, mos, ds, hs, mis, ss, frac, zulu, sign, ohs, oms] = m;
  const y = Number(ys);
  const mo = Number(mos);
  const d = Number(ds);
  const h = hs === undefined ? 0 : Number(hs);
  const mi = mis === undefined ? 0 : Number(mis);
  const s = ss === undefined ? 0 : Number(ss);
  if (!isCalendarDate(y, mo, d) || h > 23 || mi > 59 || s > 59) return undefined;
  const micros = frac === undefined ? '000000' : frac.slice(0, 6).padEnd(6, '0');
  const offset = sign === undefined || zulu !== undefined ? 0 : offsetMinutes(sign, ohs, oms);
  if (offset === undefined) return undefined;
  if (offset === 0) return `${ys}-${mos}-${ds}T${pad2(h)}:${pad2(mi)}:${pad2(s)}.${micros}`;

  // setUTCFullYear, unlike Date.UTC, does not map years 0-99 to 1900-1999.
  const at = new Date(0);
  at.setUTCFullYear(y, mo - 1, d);
  at.setUTCHours(h, mi - offset, s, 0);
  const uy = at.getUTCFullYear();
  if (uy < 1 || uy > 9999) return undefined;
  const date = `${String(uy).padStart(4, '0')}-${pad2(at.getUTCMonth() + 1)}-${pad2(at.getUTCDate())}`;
  return `${date}T${pad2(at.getUTCHours())}:${pad2(at.getUTCMinutes())}:${pad2(at.getUTCSeconds())}.${micros}`;
}

function offsetMinutes(
  sign: string,
  hours: string | undefined,
  minutes: string | undefined,
): number | undefined {
  const h = Number(hours);
  const m = minutes === undefined ? 0 : Number(minutes);
  if (h > 23 || m > 59) return undefined;
  return (sign === '-' ? -1 : 1) * (h * 60 + m);
}
