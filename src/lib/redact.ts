// Keeps secrets out of logs and messages: query values (signatures, tokens, personal data) and the
// passwords of URLs.

/** `/a?sig=abc&x=1&flag` → `/a?sig&x&flag`: the path and the query's keys, none of its values. */
export function withoutQueryValues(url: string): string {
  const q = url.indexOf('?');
  if (q < 0) return url;
  const query = url.slice(q + 1);
  if (query === '') return url.slice(0, q);
  const keys: string[] = [];
  for (const part of query.split('&')) {
    if (part === '') continue;
    const eq = part.indexOf('=');
    keys.push(eq < 0 ? part : part.slice(0, eq));
  }
  return `${url.slice(0, q)}?${keys.join('&')}`;
}

/** `postgres://u:secret@db/x` → `postgres://u:***@db/x`; anything that is not a URL comes back as given. */
export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password !== '') u.password = '***';
    return u.toString();
  } catch {
    return url;
  }
}

/** What may be shown and logged of a URL given to the service: no user or password, the query's
 * keys without values, no fragment (`https://host/path?X-Amz-Signature&X-Amz-Date`). */
export function urlWithoutSecrets(url: string): string {
  try {
    const u = new URL(url);
    return withoutQueryValues(`${u.protocol}//${u.host}${u.pathname}${u.search}`);
  } catch {
    return '(invalid URL)';
  }
}
