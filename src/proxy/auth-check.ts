// The proxy's light validation of a request's credentials: the Authorization header must be well
// formed (the upstream checks whether it is right).

// `Basic` (any case, RFC 9110 §11.1) then one or more spaces, then standard base64 with padding.
const BASIC = /^[Bb][Aa][Ss][Ii][Cc] +([A-Za-z0-9+/]+={0,2}) *$/;
const MODE = /^-?[0-9]+$/;

/**
 * Whether `value` is `Basic base64(<name>:<key>|<mode>)` with a non-empty name and key and an
 * integer mode. Never logs or keeps the value.
 */
export function isWellFormedAuthorization(value: string | undefined): boolean {
  if (value === undefined) return false;
  const match = BASIC.exec(value);
  const encoded = match?.[1];
  if (encoded === undefined || encoded.length % 4 !== 0) return false;
  const decoded = Buffer.from(encoded, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon <= 0) return false;
  const bar = decoded.lastIndexOf('|');
  // The key sits between the colon and the last bar and must not be empty.
  if (bar <= colon + 1) return false;
  return MODE.test(decoded.slice(bar + 1));
}
