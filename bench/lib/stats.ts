// Small numeric helpers for the report: medians over repeated runs, ratios and rounding.

/** The median of `values` (the mean of the middle two for an even count); NaN when empty. */
export function median(values: readonly number[]): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1
    ? (sorted[mid] as number)
    : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}

/** `value` rounded to `digits` decimals. */
export function round(value: number, digits = 0): number {
  const f = 10 ** digits;
  return Math.round(value * f) / f;
}

/** `a / b` as `0.83×`, or `–` when either side is missing. */
export function ratio(a: number, b: number): string {
  if (!Number.isFinite(a) || !Number.isFinite(b) || b === 0) return '–';
  return `${(a / b).toFixed(2)}×`;
}

/** A number for a table cell: `–` when missing, thousands kept plain so columns stay narrow. */
export function cell(value: number | undefined, digits = 0): string {
  return value === undefined || !Number.isFinite(value) ? '–' : round(value, digits).toFixed(digits);
}
