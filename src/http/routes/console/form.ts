// Reading fields of a submitted form (application/x-www-form-urlencoded).

/** One text field of a form body; '' when absent, the first value when repeated. */
export function field(body: unknown, name: string): string {
  if (body === null || typeof body !== 'object') return '';
  const value = (body as Record<string, unknown>)[name];
  if (typeof value === 'string') return value;
  if (Array.isArray(value) && typeof value[0] === 'string') return value[0];
  return '';
}
