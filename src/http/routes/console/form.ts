// Reading fields of a submitted form (application/x-www-form-urlencoded).

/** One text field of a form body; '' when absent, the first value when repeated. */
export function field(body: unknown, name: string): string {
  if (body === null || typeof body !== 'object') return '';
  const value = (body as Record<string, unknown>)[name];
  if (typeof value === 'string') return value;
  if (Array.isArray(value) && typeof value[0] === 'string') return value[0];
  return '';
}

/** The values of a form's checkboxes named `name`: none, one (a string) or several (an array); null
 * when they are not text of at most `maxLength` characters each. */
export function checkedValues(body: unknown, name: string, maxLength = 200): string[] | null {
  const value =
    body !== null && typeof body === 'object' ? (body as Record<string, unknown>)[name] : undefined;
  const list: unknown[] = Array.isArray(value) ? value : value === undefined ? [] : [value];
  return list.every((v): v is string => typeof v === 'string' && v.length > 0 && v.length <= maxLength)
    ? list
    : null;
}
