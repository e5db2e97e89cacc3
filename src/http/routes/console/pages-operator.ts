// The operator's pages: apps and their keys, workspaces, proxy IDs and the service's health.
// Secrets (private keys, Workspace Keys, proxy IDs, invitation links) appear only on the page
// that answers the form that made them; no page shows them again.
import { html, type SafeHtml } from './html.js';
import { namePager, nameSearch, type NameListPage } from './name-lists.js';
import { when } from './times.js';
import {
  checkboxes,
  csrfField,
  dataTable,
  errorBox,
  layout,
  OPERATOR,
  type Crumb,
  type PageContext,
} from './pages.js';
import { resetLinkForm } from './pages-account.js';
import { KEY_ALGORITHMS, type KeyAlgorithm } from '../../../domain/identity/apps.js';
import type { Installation } from '../../../domain/identity/installations.js';
import {
  DEFAULT_WEBHOOK_EVENTS,
  WEBHOOK_EVENTS,
  type Webhook,
  type WebhookWithSecret,
} from '../../../domain/webhooks/webhooks.js';
import { WORKSPACE_TYPES } from '../../../domain/identity/workspaces.js';
import type { ProxyIdInfo } from '../../../domain/identity/proxy-ids.js';
import type { AccountChange, AccountListing } from '../../../domain/console/accounts.js';

export const OPERATOR_BASE = '/console/operator';
const APPS: Crumb = { label: 'Apps', href: `${OPERATOR_BASE}/apps` };
export const OPERATOR_WORKSPACES: Crumb = { label: 'Workspaces', href: `${OPERATOR_BASE}/workspaces` };
const PROXY_IDS: Crumb = { label: 'Proxy IDs', href: `${OPERATOR_BASE}/proxy-ids` };
const appCrumb = (app: { appId: string; appName: string }): Crumb => ({
  label: app.appName,
  href: `${APPS.href}/${app.appId}`,
});

const notice = (text: string | null) =>
  text !== null ? html`<p class="notice" role="status">${text}</p>` : '';

/** "active" and the link to the revocation's confirmation page, named in full for screen readers. */
const activeWithRevoke = (href: string, label: string) =>
  html`active<br /><a href="${href}" aria-label="${label}">Revoke…</a>`;

const algorithmSelect = (id: string) =>
  html`<label for="${id}">Key algorithm</label>
    <select id="${id}" name="alg" aria-describedby="${id}-hint">
      ${KEY_ALGORITHMS.map((a) => html`<option value="${a}">${a}</option>`)}
    </select>
    <p class="hint" id="${id}-hint">
      RS256: an RSA 2048 key, what most JWT libraries expect. ES256: a P-256 key.
    </p>`;

/**
 * A private key, shown once: in a read-only text box the operator can copy from, inside a form
 * whose button posts that same text back and receives it as a file. The server keeps no copy;
 * no JavaScript and no `data:` URL is needed.
 */
function privateKeyBlock(ctx: PageContext, pem: string, fileStem: string): SafeHtml {
  return html`<h2>Private key</h2>
    <p class="notice" role="status">
      This is the only time the private key is shown. Download it or copy it now and keep it safe: the service
      stores only the public key and cannot show this one again.
    </p>
    <form method="post" action="${OPERATOR_BASE}/private-key">
      ${csrfField(ctx)}
      <input type="hidden" name="file" value="${fileStem}" />
      <label for="private-key">Private key (PEM)</label>
      <textarea id="private-key" name="pem" readonly rows="8" spellcheck="false">${pem}</textarea>
      <button type="submit">Download the private key (.pem file)</button>
    </form>`;
}

/** The operator's start page: the service's health at a glance and the operator's tools. */
export function operatorHomePage(
  ctx: PageContext,
  health: {
    queued: number;
    running: number;
    /** Workers holding a live lease on a running job now. */
    busyWorkers: number;
    /** Running jobs whose lease lapsed (their worker stopped renewing it). */
    lapsed: number;
    failedLastDay: number;
    /** The job that has waited longest for a worker: since when, and for how long; null: none waits. */
    oldestQueued: { since: string; waited: string } | null;
    engine: string;
    version: string;
    startedAt: Date;
    uptime: string;
  },
): string {
  return layout(
    ctx,
    'Operator',
    html`<h1>Operator</h1>
      <ul>
        <li><a href="${OPERATOR_BASE}/apps">Apps</a>: create apps, add and revoke their keys</li>
        <li><a href="${OPERATOR_BASE}/workspaces">Workspaces</a>: create workspaces, invite their owners</li>
        <li><a href="${OPERATOR_BASE}/proxy-ids">Proxy IDs</a>: onboard request-proxy clients</li>
        <li>
          <a href="${OPERATOR_BASE}/accounts">Accounts</a>: who can sign in; disable an account, give or take
          back operator rights
        </li>
      </ul>
      <h2>Health at a glance</h2>
      <dl>
        <dt>Jobs queued</dt>
        <dd id="jobs-queued">${health.queued}</dd>
        <dt>Waiting longest</dt>
        <dd id="jobs-oldest-queued">
          ${
            health.oldestQueued === null
              ? 'no job waits for a worker'
              : html`${health.oldestQueued.waited}, queued ${when(health.oldestQueued.since)}`
          }
        </dd>
        <dt>Jobs running</dt>
        <dd id="jobs-running">${health.running}</dd>
        <dt>Workers busy now</dt>
        <dd id="workers-busy">${health.busyWorkers}</dd>
        <dt>Loads whose worker stopped answering</dt>
        <dd id="jobs-lapsed">
          ${health.lapsed}${
            health.lapsed > 0
              ? html` <span class="hint"
                  >(their lease lapsed: another worker takes them over at its next poll)</span
                >`
              : ''
          }
        </dd>
        <dt>Jobs failed in the last 24 hours</dt>
        <dd id="jobs-failed">${health.failedLastDay}</dd>
        <dt>Database</dt>
        <dd id="database-engine">${health.engine}</dd>
        <dt>Version</dt>
        <dd id="service-version">${health.version}</dd>
        <dt>Up for</dt>
        <dd id="service-uptime">${health.uptime} (since ${when(health.startedAt)})</dd>
      </dl>
      <p class="hint">
        Counts are of every process on this database, the same figures as the dx_jobs_queued and
        dx_jobs_running metrics. Failed jobs are counted by when they failed. A worker is seen while it holds
        a load (it renews the load's lease as it works); an idle one writes nothing: each process's /readyz
        tells whether it is up.
      </p>
      <h2>Password reset link</h2>
      <p>
        For someone who cannot sign in: a link to choose a new password, shown once, for you to send them.
      </p>
      ${resetLinkForm(ctx)}`,
  );
}

/** An app as the list shows it, with its keys. */
export interface AppListing {
  id: string;
  name: string;
  ownWorkspaceId: number | null;
  createdAt: string;
  keys: {
    kid: string;
    alg: string;
    createdAt: string;
    revokedAt: string | null;
    /** When it last signed a JWT the service verified; null: never. */
    lastUsedAt: string | null;
  }[];
}

/** An app as its own page shows it. */
export interface AppDetail extends AppListing {
  /** The workspaces the app is installed in, oldest installation first. */
  installations: Installation[];
  /** Its webhook, null when it has none. */
  webhook: Webhook | null;
}

const keyList = (keys: AppListing['keys']) =>
  keys.length === 0
    ? 'none'
    : html`<ul class="plain">
        ${keys.map(
          (k) =>
            html`<li>
              <code>${k.kid}</code> ${k.alg}, created
              ${when(k.createdAt)}${
                k.revokedAt !== null ? html`, <strong>revoked</strong> ${when(k.revokedAt)}` : ''
              }
            </li>`,
        )}
      </ul>`;

/** Every app with its keys, and the form that creates one. */
/** Items per page of the operator's lists (apps, workspaces). */
export const OPERATOR_LIST_PAGE = 50;

export function appsPage(ctx: PageContext, apps: AppListing[], list: NameListPage): string {
  return layout(
    ctx,
    'Apps',
    html`<h1>Apps</h1>
      <h2>Create an app</h2>
      <p>
        Creating an app also creates its own workspace, connected to it, so its developer can try it at once.
        The private key and that workspace's key are shown once, on the next page.
      </p>
      <form method="post" action="${OPERATOR_BASE}/apps">
        ${csrfField(ctx)}
        <label for="name">App name</label>
        <input id="name" name="name" required maxlength="200" />
        ${algorithmSelect('alg')}
        <button type="submit">Create app</button>
      </form>
      <h2>All apps</h2>
      ${nameSearch(list, 'apps')}
      ${
        apps.length === 0
          ? list.search === '' && !list.later
            ? html`<p>No apps yet.</p>`
            : ''
          : dataTable(
              ['Name', 'App ID', 'Keys (kid, algorithm, dates UTC)'],
              apps.map((a) => [
                html`<a href="${OPERATOR_BASE}/apps/${a.id}">${a.name}</a>`,
                html`<code>${a.id}</code>`,
                keyList(a.keys),
              ]),
            )
      }
      ${namePager(list, 'apps')}`,
    [OPERATOR],
  );
}

/** One app: its keys with revoke links, and the form that adds a key. */
export function appPage(
  ctx: PageContext,
  app: AppDetail,
  opts: { notice: string | null; webhookError?: { url: string; message: string } },
): string {
  return layout(
    ctx,
    app.name,
    html`<h1>${app.name}</h1>
      ${notice(opts.notice)}
      <dl>
        <dt>App ID</dt>
        <dd><code id="app-id" data-copy="the App ID">${app.id}</code></dd>
        <dt>Own workspace</dt>
        <dd>
          ${
            app.ownWorkspaceId !== null
              ? html`<a href="/console/workspaces/${app.ownWorkspaceId}">${app.ownWorkspaceId}</a>`
              : 'none'
          }
        </dd>
        <dt>Created (UTC)</dt>
        <dd>${when(app.createdAt)}</dd>
      </dl>
      <h2>Keys</h2>
      <p class="hint">
        An app may have several active keys at once, so it can move to a new key before the old one is
        revoked. "Last used" is when the service last verified a JWT signed with the key (to the minute): a
        key unused for long is safe to revoke.
      </p>
      ${dataTable(
        ['Key ID (kid), algorithm', 'Created (UTC)', 'Last used (UTC)', 'Revoked (UTC)'],
        app.keys.map((k) => [
          html`<code>${k.kid}</code><br />${k.alg}`,
          when(k.createdAt),
          k.lastUsedAt !== null ? when(k.lastUsedAt) : html`<span class="hint">never</span>`,
          k.revokedAt !== null
            ? when(k.revokedAt)
            : activeWithRevoke(`${OPERATOR_BASE}/apps/${app.id}/keys/${k.kid}/revoke`, `Revoke key ${k.kid}`),
        ]),
      )}
      <h2>Add a key</h2>
      <p>The service generates a key pair; the private key is shown once, on the next page.</p>
      <form method="post" action="${OPERATOR_BASE}/apps/${app.id}/keys">
        ${csrfField(ctx)} ${algorithmSelect('alg')}
        <button type="submit">Generate a key</button>
      </form>
      <h2>Rename the app</h2>
      <form method="post" action="${OPERATOR_BASE}/apps/${app.id}/name">
        ${csrfField(ctx)}
        <label for="app-name">App name</label>
        <input id="app-name" name="name" required maxlength="200" value="${app.name}" />
        <button type="submit" class="secondary">Rename</button>
      </form>
      <h2>Installed in</h2>
      ${installationsTable(app)}
      <h2>Webhook</h2>
      ${webhookSection(ctx, app, opts.webhookError ?? null)}`,
    [OPERATOR, APPS],
  );
}

/** The workspaces the app is installed in (the API's listInstallations of the app). */
function installationsTable(app: AppDetail): SafeHtml {
  if (app.installations.length === 0) return html`<p>Not installed in any workspace.</p>`;
  return dataTable(
    ['Workspace', 'Installation ID', 'Connected (UTC)'],
    app.installations.map((i) => [
      html`<a href="/console/workspaces/${i.workspaceId}">${i.name}</a>${
          i.workspaceId === app.ownWorkspaceId ? html` <span class="hint">(its own)</span>` : ''
        }`,
      i.installationId,
      when(i.dateCreated),
    ]),
  );
}

/** The app's webhook, and the form that sets (or replaces) it; `error` is the refused form's. */
function webhookSection(ctx: PageContext, app: AppDetail, error: { url: string; message: string } | null) {
  const hook = app.webhook;
  const shown =
    hook === null
      ? html`<p id="webhook-none">No webhook: the app learns of its loads' ends by polling.</p>`
      : html`<dl>
            <dt>URL</dt>
            <dd><code id="webhook-url" class="wrap">${hook.url}</code></dd>
            <dt>Events</dt>
            <dd>${hook.events.join(', ')}</dd>
            <dt>Updated (UTC)</dt>
            <dd>${when(hook.dateUpdated)}</dd>
          </dl>
          <p><a href="${OPERATOR_BASE}/apps/${app.id}/webhook/remove">Remove the webhook…</a></p>`;
  const events = hook?.events ?? DEFAULT_WEBHOOK_EVENTS;
  return html`${shown}
    <h3>${hook === null ? 'Set a webhook' : 'Replace the webhook'}</h3>
    <p class="hint">
      The service POSTs each event, signed with a secret (X-DX-Signature-256). A new secret is made and shown
      once, on the next page; ${hook === null ? '' : 'the current one stops working then; '}the app's
      developer needs it.
    </p>
    ${error !== null ? errorBox(error.message) : ''}
    <form method="post" action="${OPERATOR_BASE}/apps/${app.id}/webhook">
      ${csrfField(ctx)}
      <label for="webhook-url-field">URL (https)</label>
      <input
        id="webhook-url-field"
        name="url"
        type="url"
        required
        maxlength="2048"
        value="${error?.url ?? hook?.url ?? ''}"
      />
      ${checkboxes(
        'Events',
        'event',
        WEBHOOK_EVENTS.map((e) => ({ value: e, label: e, checked: events.includes(e) })),
      )}
      <button type="submit">${hook === null ? 'Set the webhook' : 'Replace the webhook'}</button>
    </form>`;
}

/** After setting a webhook: its secret, shown this once. */
export function webhookSetPage(
  ctx: PageContext,
  app: { appId: string; appName: string },
  hook: WebhookWithSecret,
): string {
  return layout(
    ctx,
    'Webhook set',
    html`<h1>Webhook of ${app.appName} set</h1>
      <dl>
        <dt>URL</dt>
        <dd><code class="wrap">${hook.url}</code></dd>
        <dt>Events</dt>
        <dd>${hook.events.join(', ')}</dd>
      </dl>
      <h2>Signing secret</h2>
      <code class="secret" id="webhook-secret">${hook.secret}</code>
      <p>
        <strong>Copy it now: it will not be shown again.</strong> Give it to the app's developer: the app
        checks each delivery's X-DX-Signature-256 with it. Setting the webhook again makes a new one.
      </p>
      <p><a href="${OPERATOR_BASE}/apps/${app.appId}">Back to ${app.appName}</a></p>`,
    [OPERATOR, APPS, appCrumb(app)],
  );
}

/** Asks before removing an app's webhook, and says what removing does. */
export function removeWebhookPage(
  ctx: PageContext,
  app: { appId: string; appName: string },
  hook: Webhook,
): string {
  return layout(
    ctx,
    'Remove the webhook',
    html`<h1>Remove the webhook of ${app.appName}?</h1>
      <p>
        The service stops POSTing events to <code class="wrap">${hook.url}</code>, and deliveries not yet sent
        are dropped. The app can still poll its loads' status. Setting a webhook again makes a new secret.
      </p>
      <form method="post" action="${OPERATOR_BASE}/apps/${app.appId}/webhook/remove">
        ${csrfField(ctx)}
        <button type="submit" class="danger">Remove the webhook</button>
      </form>
      <p><a href="${OPERATOR_BASE}/apps/${app.appId}">Cancel, back to the app</a></p>`,
    [OPERATOR, APPS, appCrumb(app)],
  );
}

/** After creating an app: everything its developer needs, the secrets shown this once. */
export function appCreatedPage(
  ctx: PageContext,
  created: {
    appId: string;
    name: string;
    kid: string;
    alg: KeyAlgorithm;
    workspaceId: number;
    workspaceKey: string;
    installationId: number;
    privateKeyPem: string;
  },
): string {
  return layout(
    ctx,
    'App created',
    html`<h1>App created: ${created.name}</h1>
      <dl>
        <dt>App ID</dt>
        <dd><code id="app-id" data-copy="the App ID">${created.appId}</code></dd>
        <dt>Key ID (kid)</dt>
        <dd><code id="kid" data-copy="the key ID">${created.kid}</code> (${created.alg})</dd>
        <dt>Own workspace ID</dt>
        <dd><code id="workspace-id" data-copy="the Workspace ID">${created.workspaceId}</code></dd>
        <dt>Own Workspace Key</dt>
        <dd><code class="secret" id="workspace-key">${created.workspaceKey}</code></dd>
        <dt>Installation ID</dt>
        <dd><code id="installation-id" data-copy="the Installation ID">${created.installationId}</code></dd>
      </dl>
      ${privateKeyBlock(ctx, created.privateKeyPem, `${created.appId}-${created.kid}`)}
      <p class="hint">
        The developer signs app JWTs with the private key (issuer: the App ID, header kid: the key ID). The
        Workspace Key, like the private key, is shown only now.
      </p>
      <p><a href="${OPERATOR_BASE}/apps/${created.appId}">Go to the app</a></p>`,
    [OPERATOR, APPS],
  );
}

/** After adding a key: its private half, shown this once. */
export function keyAddedPage(
  ctx: PageContext,
  key: { appId: string; appName: string; kid: string; alg: string; privateKeyPem: string },
): string {
  return layout(
    ctx,
    'Key added',
    html`<h1>Key added to ${key.appName}</h1>
      <dl>
        <dt>Key ID (kid)</dt>
        <dd><code id="kid">${key.kid}</code> (${key.alg})</dd>
      </dl>
      ${privateKeyBlock(ctx, key.privateKeyPem, `${key.appId}-${key.kid}`)}`,
    [OPERATOR, APPS, appCrumb(key)],
  );
}

/** Asks before revoking a key, and says what revoking does. */
export function revokeKeyPage(
  ctx: PageContext,
  key: { appId: string; appName: string; kid: string },
): string {
  return layout(
    ctx,
    'Revoke key',
    html`<h1>Revoke key ${key.kid} of ${key.appName}?</h1>
      <p>
        From now on the service refuses app JWTs signed with this key, and the access tokens they minted. The
        app keeps working only if it signs with another active key. This cannot be undone.
      </p>
      <form method="post" action="${OPERATOR_BASE}/apps/${key.appId}/keys/${key.kid}/revoke">
        ${csrfField(ctx)}
        <button type="submit" class="danger">Revoke key ${key.kid}</button>
      </form>
      <p><a href="${OPERATOR_BASE}/apps/${key.appId}">Cancel, back to the app</a></p>`,
    [OPERATOR, APPS, appCrumb(key)],
  );
}

/** A workspace as the operator's list shows it. */
export interface WorkspaceListing {
  id: number;
  name: string;
  type: string;
  createdAt: string;
  owners: string[];
  /** Invited as owners, links still good. */
  pendingOwners: string[];
}

const workspaceForm = (ctx: PageContext) =>
  html`<form method="post" action="${OPERATOR_BASE}/workspaces">
    ${csrfField(ctx)}
    <label for="name">Workspace name</label>
    <input id="name" name="name" required maxlength="200" />
    <label for="type">Type</label>
    <select id="type" name="type">
      ${WORKSPACE_TYPES.map((t) => html`<option value="${t}">${t}</option>`)}
    </select>
    <button type="submit">Create workspace</button>
  </form>`;

const inviteOwnerForm = (ctx: PageContext, workspaceId: number, email = '') =>
  html`<form method="post" action="${OPERATOR_BASE}/workspaces/${workspaceId}/owner-invitations">
    ${csrfField(ctx)}
    <label for="email">Owner's email</label>
    <input id="email" name="email" type="email" required maxlength="254" value="${email}" />
    <button type="submit">Create invitation link</button>
  </form>`;

/** The owners, and who is invited as one while the link still works ("none yet" only when neither). */
function ownersCell(w: WorkspaceListing): string {
  const pending = w.pendingOwners.map((email) => `${email} (invitation pending)`);
  const all = [...w.owners, ...pending];
  return all.length > 0 ? all.join(', ') : 'none yet';
}

/** Every workspace, with its console owners, and the form that creates one. */
export function workspacesPage(ctx: PageContext, workspaces: WorkspaceListing[], list: NameListPage): string {
  return layout(
    ctx,
    'Workspaces',
    html`<h1>Workspaces</h1>
      <h2>Create a workspace</h2>
      <p>Its Workspace Key is shown once, on the next page, where you can also invite its owner.</p>
      ${workspaceForm(ctx)}
      <h2>All workspaces</h2>
      ${nameSearch(list, 'workspaces')}
      ${dataTable(
        ['ID', 'Workspace', 'Console owners'],
        workspaces.map((w) => [
          w.id,
          html`<a href="/console/workspaces/${w.id}">${w.name}</a>
            <span class="hint">${w.type}, created ${when(w.createdAt)}</span>`,
          html`<span class="wrap">${ownersCell(w)}</span><br /><a
              href="${OPERATOR_BASE}/workspaces/${w.id}/invite-owner"
              aria-label="Invite an owner to ${w.name}"
              >Invite an owner</a
            >`,
        ]),
      )}
      ${namePager(list, 'workspaces')}`,
    [OPERATOR],
  );
}

/** After creating a workspace: its ID and Key (shown once), and the owner's invitation form. */
export function workspaceCreatedPage(
  ctx: PageContext,
  ws: { id: number; name: string; type: string; workspaceKey: string },
): string {
  return layout(
    ctx,
    'Workspace created',
    html`<h1>Workspace created: ${ws.name}</h1>
      <dl>
        <dt>Workspace ID</dt>
        <dd><code id="workspace-id" data-copy="the Workspace ID">${ws.id}</code></dd>
        <dt>Type</dt>
        <dd>${ws.type}</dd>
        <dt>Workspace Key</dt>
        <dd><code class="secret" id="workspace-key">${ws.workspaceKey}</code></dd>
      </dl>
      <p class="notice" role="status">
        The Workspace Key is shown only now. An app developer needs the Workspace ID and Key to connect an
        app; the owner can make a new key later (the old one then stops working).
      </p>
      <h2>Invite the owner</h2>
      <p>The owner gets a one-time link, valid 24 hours, to set a password and open the workspace.</p>
      ${inviteOwnerForm(ctx, ws.id)}`,
    [OPERATOR, OPERATOR_WORKSPACES],
  );
}

/** The owner's invitation form for an existing workspace. */
export function inviteOwnerPage(
  ctx: PageContext,
  ws: { id: number; name: string; owners: string[] },
  opts: { error: string | null; email: string },
): string {
  return layout(
    ctx,
    'Invite an owner',
    html`<h1>Invite an owner to ${ws.name}</h1>
      <p>
        ${ws.owners.length > 0 ? `Owners now: ${ws.owners.join(', ')}.` : 'The workspace has no owner yet.'}
        The link works once, for 24 hours.
      </p>
      ${errorBox(opts.error)} ${inviteOwnerForm(ctx, ws.id, opts.email)}`,
    [OPERATOR, OPERATOR_WORKSPACES],
  );
}

/** A "last used" cell: the instant, or "never". */
const lastUsed = (at: string | undefined) =>
  at !== undefined ? when(at) : html`<span class="hint">never</span>`;

/** Every proxy ID by its prefix, and the form that creates one. */
export function proxyIdsPage(
  ctx: PageContext,
  ids: ProxyIdInfo[],
  opts: { notice: string | null; lastUses: ReadonlyMap<string, string> },
): string {
  return layout(
    ctx,
    'Proxy IDs',
    html`<h1>Proxy IDs</h1>
      ${notice(opts.notice)}
      <p>
        A proxy ID is the X-PROXYVID value a request-proxy client sends. It is shown once when made; the
        service keeps only its hash and its prefix, which names it here and in logs.
      </p>
      <p class="hint">
        "Last used" is when the request proxy last let a request through with the ID (to the minute): an ID
        unused for long is safe to revoke.
      </p>
      <h2>Create a proxy ID</h2>
      <form method="post" action="${OPERATOR_BASE}/proxy-ids">
        ${csrfField(ctx)}
        <label for="name">Who it is for</label>
        <input id="name" name="name" required maxlength="200" />
        <button type="submit">Create proxy ID</button>
      </form>
      <h2>All proxy IDs</h2>
      ${
        ids.length === 0
          ? html`<p>No proxy IDs yet.</p>`
          : dataTable(
              ['Prefix', 'Name', 'Created (UTC)', 'Last used (UTC)', 'Revoked (UTC)'],
              ids.map((p) => [
                html`<code>${p.prefix}</code>`,
                p.name,
                when(p.createdAt),
                lastUsed(opts.lastUses.get(p.prefix)),
                p.revokedAt !== null
                  ? when(p.revokedAt)
                  : activeWithRevoke(`${OPERATOR_BASE}/proxy-ids/${p.prefix}/revoke`, `Revoke ${p.prefix}`),
              ]),
            )
      }`,
    [OPERATOR],
  );
}

/** After creating a proxy ID: the ID itself, this once. */
export function proxyIdCreatedPage(ctx: PageContext, id: string, info: ProxyIdInfo): string {
  return layout(
    ctx,
    'Proxy ID created',
    html`<h1>Proxy ID created for ${info.name}</h1>
      <p class="notice" role="status">
        Hand this ID to the client now: it is shown only this once. The service keeps only its hash and its
        prefix
        <code>${info.prefix}</code>.
      </p>
      <p>X-PROXYVID:</p>
      <code class="secret" id="proxy-id">${id}</code>`,
    [OPERATOR, PROXY_IDS],
  );
}

/** Asks before revoking a proxy ID, and says what revoking does. */
export function revokeProxyIdPage(ctx: PageContext, info: ProxyIdInfo, refreshSeconds: number): string {
  return layout(
    ctx,
    'Revoke proxy ID',
    html`<h1>Revoke proxy ID ${info.prefix} (${info.name})?</h1>
      <p>
        Running proxies refuse it within ${refreshSeconds} seconds; the client's requests then get 400. This
        cannot be undone: the client needs a new ID.
      </p>
      <form method="post" action="${OPERATOR_BASE}/proxy-ids/${info.prefix}/revoke">
        ${csrfField(ctx)}
        <button type="submit" class="danger">Revoke ${info.prefix}</button>
      </form>
      <p><a href="${PROXY_IDS.href}">Cancel, back to the proxy IDs</a></p>`,
    [OPERATOR, PROXY_IDS],
  );
}

/** The changes of an account the accounts page offers: their path, button and notice. */
export const ACCOUNT_CHANGES: Record<AccountChange, { path: string; button: string; done: string }> = {
  disable: { path: 'disable', button: 'Disable', done: 'The account is disabled; its sessions ended.' },
  enable: { path: 'enable', button: 'Enable', done: 'The account is enabled: it can sign in again.' },
  grantOperator: {
    path: 'grant-operator',
    button: 'Make operator',
    done: 'The account has operator rights.',
  },
  revokeOperator: {
    path: 'revoke-operator',
    button: 'Take back operator rights',
    done: 'The account no longer has operator rights.',
  },
};

/** The change whose path is `path`, if any. */
export function accountChangeAt(path: string | undefined): AccountChange | undefined {
  return (Object.keys(ACCOUNT_CHANGES) as AccountChange[]).find((c) => ACCOUNT_CHANGES[c].path === path);
}

/** The operator's list of accounts, with the changes each one allows. */
export function accountsPage(
  ctx: PageContext,
  accounts: AccountListing[],
  list: NameListPage,
  opts: { self: number; notice: string | null },
): string {
  const form = (a: AccountListing, change: AccountChange) => {
    const c = ACCOUNT_CHANGES[change];
    const danger = change === 'disable' || change === 'revokeOperator';
    return html`<form method="post" action="${OPERATOR_BASE}/accounts/${a.id}/${c.path}" class="inline">
      ${csrfField(ctx)}
      <button type="submit" class="${danger ? 'danger' : 'secondary'}">
        ${c.button}<span class="visually-hidden"> ${a.email}</span>
      </button>
    </form>`;
  };
  const actions = (a: AccountListing) =>
    a.id === opts.self
      ? html`<span class="hint">your own account</span>`
      : html`${form(a, a.disabledAt === null ? 'disable' : 'enable')}
        ${form(a, a.isOperator ? 'revokeOperator' : 'grantOperator')}`;
  const status = (a: AccountListing) =>
    a.disabledAt !== null
      ? html`disabled ${when(a.disabledAt)}`
      : a.hasPassword
        ? 'active'
        : html`<span class="hint">invited, no password yet</span>`;
  return layout(
    ctx,
    'Accounts',
    html`<h1>Accounts</h1>
      ${notice(opts.notice)}
      <p>
        Everyone who can sign in to the console. A disabled account keeps its workspaces and its history but
        cannot sign in; its sessions end at once. Operator rights open these pages. You cannot disable your
        own account or take back your own rights: another operator can, so the service always keeps one.
      </p>
      ${nameSearch(list, 'accounts', 'email or name')}
      ${dataTable(
        ['Account', 'Workspaces', 'Rights', 'Status', 'Change'],
        accounts.map((a) => [
          html`<span class="wrap">${a.email}</span><br /><span class="hint">${a.displayName}</span>`,
          a.workspaces,
          a.isOperator ? 'Operator' : 'Member',
          status(a),
          actions(a),
        ]),
      )}
      ${namePager(list, 'accounts')}`,
    [OPERATOR],
  );
}
