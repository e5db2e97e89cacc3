// Keeps secrets out of logs and messages: query values (signatures, tokens, personal data) and the
// passwords of URLs.

/** `/a?sig=abc&x=1&flag` → `/a?sig&x&flag`: the path and the query's keys, none of its values. */
export function withoutQueryValues(url: string): string {
  const q = url.indexOf('?');
  if (q < 0) return url;
  if (q === url.length - 1) return url.slice(0, q);
  // One pass with slices (no split, array or join): it runs for every proxied request.
  let out = url.slice(0, q + 1);
  let first = true;
  // The first '=' not behind the current part (-1: none left), searched again only once passed.
  let eq = url.indexOf('=', q + 1);
  for (let at = q + 1; at <= url.length;) {
    let end = url.indexOf('&', at);
    if (end < 0) end = url.length;
    if (end > at) {
      if (eq >= 0 && eq < at) eq = url.indexOf('=', at);
      const key = url.slice(at, eq < 0 || eq > end ? end : eq);
      out += first ? key : `&${key}`;
      first = false;
    }
    at = end + 1;
  }
  return out;
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
