// Keeps secrets out of logs: query values (signatures, tokens) are dropped, keys kept.

/** `/a?sig=abc&x=1` → `/a?sig=&x=`: the shape of a URL without its query values. */
export function withoutQueryValues(url: string): string {
  const q = url.indexOf('?');
  if (q === -1) return url;
  const keys = url
    .slice(q + 1)
    .split('&')
    .map((pair) => pair.split('=')[0])
    .filter((k) => k !== undefined && k !== '');
  return `${url.slice(0, q)}?${keys.map((k) => `${k}=`).join('&')}`;
}
