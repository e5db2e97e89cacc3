// A minimal browser for the console's HTTP tests: a cookie jar, form posts with the page's CSRF
// token, and redirects left to the test to follow. It speaks to the app in-process (inject).
import assert from 'node:assert/strict';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { CLI_ACTOR } from '../../src/domain/console/audit.js';
import { consoleDb } from '../../src/domain/console/db.js';
import { invitationLink, inviteMember, inviteOperator } from '../../src/domain/console/people.js';
import type { ConsoleRole } from '../../src/domain/console/roles.js';
import type { Fixture } from './fixture.js';

/** Text or an attribute value as a page has it (escaped by the console's html template), unescaped. */
export function unescapeHtml(text: string): string {
  return text
    .replaceAll('&lt;', '<')
    .replaceAll('&gt;', '>')
    .replaceAll('&quot;', '"')
    .replaceAll('&#39;', "'")
    .replaceAll('&amp;', '&');
}

/** The value of the page's CSRF field, or throws when the page has none. */
export function csrfOf(page: string): string {
  const m = /name="_csrf" value="([^"]+)"/.exec(page);
  if (m === null) throw new Error(`no CSRF field on the page:\n${page}`);
  return m[1]!;
}

export class ConsoleBrowser {
  readonly cookies = new Map<string, string>();
  constructor(
    private readonly app: () => FastifyInstance,
    /** The client address the service sees (sign-in is rate limited per email+IP). */
    readonly ip = '127.0.0.1',
    /** Sent with every request (say, the X-Forwarded-For of a reverse proxy). */
    private readonly headers: Record<string, string> = {},
  ) {}

  private cookieHeader(): string {
    return [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
  }

  private keep(res: LightMyRequestResponse): LightMyRequestResponse {
    for (const c of res.cookies as { name: string; value: string; maxAge?: number; expires?: Date }[]) {
      const gone = c.value === '' || (c.expires !== undefined && c.expires.getTime() <= Date.now());
      if (gone) this.cookies.delete(c.name);
      else this.cookies.set(c.name, c.value);
    }
    return res;
  }

  async get(url: string): Promise<LightMyRequestResponse> {
    return this.keep(
      await this.app().inject({
        method: 'GET',
        url,
        remoteAddress: this.ip,
        headers: { ...this.headers, cookie: this.cookieHeader() },
      }),
    );
  }

  /** Posts a form (a list: a field sent once per value, as ticked checkboxes are); `_csrf` is sent
   * as given (tests of CSRF pass a wrong one or none). */
  async post(url: string, form: Record<string, string | string[]>): Promise<LightMyRequestResponse> {
    return this.keep(
      await this.app().inject({
        method: 'POST',
        url,
        remoteAddress: this.ip,
        headers: {
          ...this.headers,
          cookie: this.cookieHeader(),
          'content-type': 'application/x-www-form-urlencoded',
        },
        payload: new URLSearchParams(
          Object.entries(form).flatMap(([name, value]) =>
            (Array.isArray(value) ? value : [value]).map((v): [string, string] => [name, v]),
          ),
        ).toString(),
      }),
    );
  }

  /** Posts a `multipart/form-data` form as a browser does: `fields` in their order (the CSRF
   * token among them as given), each a text field, or a file `{ fileName, content }`. */
  async postMultipart(
    url: string,
    fields: [string, string | { fileName: string; content: string | Buffer; type?: string }][],
  ): Promise<LightMyRequestResponse> {
    const boundary = `----dxTestBoundary${Math.random().toString(16).slice(2)}`;
    const parts: Buffer[] = [];
    for (const [name, value] of fields) {
      if (typeof value === 'string') {
        parts.push(
          Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`),
        );
      } else {
        parts.push(
          Buffer.from(
            `--${boundary}\r\nContent-Disposition: form-data; name="${name}"; filename="${value.fileName}"\r\n` +
              `Content-Type: ${value.type ?? 'text/csv'}\r\n\r\n`,
          ),
          Buffer.isBuffer(value.content) ? value.content : Buffer.from(value.content),
          Buffer.from('\r\n'),
        );
      }
    }
    parts.push(Buffer.from(`--${boundary}--\r\n`));
    return this.keep(
      await this.app().inject({
        method: 'POST',
        url,
        remoteAddress: this.ip,
        headers: {
          ...this.headers,
          cookie: this.cookieHeader(),
          'content-type': `multipart/form-data; boundary=${boundary}`,
        },
        payload: Buffer.concat(parts),
      }),
    );
  }

  /** Opens `pageUrl` and submits its form with the page's CSRF token and `form`. */
  async submit(
    pageUrl: string,
    action: string,
    form: Record<string, string | string[]>,
  ): Promise<LightMyRequestResponse> {
    const page = await this.get(pageUrl);
    if (page.statusCode !== 200) throw new Error(`${pageUrl}: ${page.statusCode}\n${page.body}`);
    return this.post(action, { _csrf: csrfOf(page.body), ...form });
  }

  /** Accepts an invitation link (its path and query) with a name and password. */
  async accept(link: string, displayName: string, password: string): Promise<LightMyRequestResponse> {
    const url = new URL(link);
    const token = url.searchParams.get('token') ?? '';
    return this.submit(`${url.pathname}${url.search}`, '/console/invitation', {
      token,
      displayName,
      password,
      confirm: password,
    });
  }

  async signIn(email: string, password: string): Promise<LightMyRequestResponse> {
    return this.submit('/console/sign-in', '/console/sign-in', { email, password });
  }
}

/** The password every console test account is given. */
export const TEST_PASSWORD = 'correct horse battery staple';

/** Someone invited to a workspace from the CLI who accepted the link and signed in. */
export async function signedInMember(
  t: Pick<Fixture, 'app' | 'config' | 'database'>,
  workspaceId: number,
  role: ConsoleRole,
  address: string,
  displayName = `A ${role}`,
): Promise<ConsoleBrowser> {
  const inv = await inviteMember(consoleDb(t.database.db), CLI_ACTOR, { workspaceId, email: address, role });
  const b = new ConsoleBrowser(() => t.app);
  const accepted = await b.accept(invitationLink(t.config.publicUrl, inv.token), displayName, TEST_PASSWORD);
  assert.equal(accepted.statusCode, 303, accepted.body);
  assert.equal((await b.signIn(address, TEST_PASSWORD)).statusCode, 303);
  return b;
}

/** An operator invited through the CLI's path, who accepted and is signed in. */
export async function signedInOperator(
  t: Pick<Fixture, 'app' | 'config' | 'database'>,
  address: string,
  displayName = 'Op',
): Promise<ConsoleBrowser> {
  const inv = await inviteOperator(consoleDb(t.database.db), CLI_ACTOR, address);
  const b = new ConsoleBrowser(() => t.app);
  const accepted = await b.accept(invitationLink(t.config.publicUrl, inv.token), displayName, TEST_PASSWORD);
  assert.equal(accepted.statusCode, 303, accepted.body);
  assert.equal((await b.signIn(address, TEST_PASSWORD)).statusCode, 303);
  return b;
}
