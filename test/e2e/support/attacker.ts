// Another origin's page that submits a form to the console as soon as it loads: the classic CSRF
// attempt, made by a real browser that holds the victim's cookies.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface AttackerSite {
  /** The page's URL on `host` (127.0.0.1: same site, other origin; localhost: another site). */
  url(host: '127.0.0.1' | 'localhost', action: string, fields: Record<string, string>): string;
  close(): Promise<void>;
}

const escape = (s: string) => s.replace(/[&<>"']/g, (ch) => `&#${ch.charCodeAt(0)};`);

/** Serves GET /?action=<absolute URL>&<field>=<value>… as a self-submitting POST form. */
export async function startAttackerSite(): Promise<AttackerSite> {
  const server = createServer((req, res) => {
    const query = new URL(req.url ?? '/', 'http://attacker').searchParams;
    const action = query.get('action') ?? '';
    const inputs = [...query]
      .filter(([name]) => name !== 'action')
      .map(([name, value]) => `<input type="hidden" name="${escape(name)}" value="${escape(value)}">`)
      .join('');
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end(
      `<!doctype html><title>You won a prize</title>` +
        `<form method="post" action="${escape(action)}">${inputs}</form>` +
        `<script>document.forms[0].submit()</script>`,
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: (host, action, fields) =>
      `http://${host}:${port}/?${new URLSearchParams({ action, ...fields }).toString()}`,
    close: async () => {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    },
  };
}
