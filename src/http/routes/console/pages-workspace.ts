// The pages of a workspace's own settings: its key, its connected apps, its members, its audit
// log (and the operator's audit log of the whole service). Pure functions of what the routes
// hand them. A page offers a form only to someone whose role may use it; the routes refuse the
// rest anyway.
import { html, type SafeHtml } from './html.js';
import { when } from './times.js';
import {
  auditWhat,
  confirmNameField,
  csrfField,
  dataTable,
  errorBox,
  freeText,
  layout,
  OPERATOR,
  type PageContext,
  workspaceTrail,
} from './pages.js';
import { CONSOLE_ROLES, ROLE_POWERS } from '../../../domain/console/roles.js';
import type { WorkspaceMember } from '../../../domain/console/access.js';
import type { OpenInvitation } from '../../../domain/console/invitations.js';
import type { ConsoleRole } from '../../../domain/console/roles.js';
import type { ConnectedApp } from '../../../domain/console/connected-apps.js';
import { auditActionLabel, AUDIT_ACTIONS, type AuditAction } from '../../../domain/console/audit.js';
import type { ConsoleAuditRow } from '../../../storage/db/console-tables.js';

/** The workspace a settings page belongs to. */
export interface WorkspaceRef {
  workspaceId: number;
  name: string;
}

const base = (ws: WorkspaceRef) => `/console/workspaces/${ws.workspaceId}`;
const noticeBox = (message: string | null) =>
  message !== null ? html`<p class="notice" role="status">${message}</p>` : '';

/** What rotating the key does, said before it happens; who may rotate it gets the form. */
export function workspaceKeyPage(
  ctx: PageContext,
  opts: WorkspaceRef & {
    mayRotate: boolean;
    apps: ConnectedApp[];
    /** The current key's version: the form rotates that key only, so sending it twice rotates once. */
    keyVersion: number;
    /** Why the last attempt changed nothing, if it did not. */
    error?: string;
  },
): string {
  const form = opts.mayRotate
    ? html`<form method="post" action="${base(opts)}/key">
        ${csrfField(ctx)}
        <input type="hidden" name="keyVersion" value="${String(opts.keyVersion)}" />
        ${confirmNameField('workspace', opts.name, opts.error !== undefined)}
        <button type="submit" class="danger">Rotate the Workspace Key now</button>
      </form>`
    : html`<p id="owners-only">Only an owner of the workspace (or the operator) can rotate its key.</p>`;
  return layout(
    ctx,
    `Workspace Key · ${opts.name}`,
    html`<h1>Workspace Key of ${opts.name}</h1>
      ${errorBox(opts.error ?? null)}
      <p>
        An app developer needs the Workspace ID (<code>${opts.workspaceId}</code>) and the Workspace Key to
        connect an app and to get access tokens for it. The service keeps only a fingerprint of the key, so it
        cannot show the current key again. If the key is lost or may have leaked, rotate it.
      </p>
      <h2>What rotating the key does</h2>
      <ul id="rotation-effects">
        <li>A new key is made and shown to you once.</li>
        <li>The old key stops working at once.</li>
        <li>
          Every access token that apps got with the old key stops working at once: the apps' requests are
          refused until they get new tokens.
        </li>
        <li>
          Connected apps stay connected, but each app's developer must be given the new key before the app
          works again.
        </li>
        <li>It cannot be undone.</li>
      </ul>
      ${appsNeedingKey(opts.apps)} ${form}`,
    workspaceTrail(opts),
  );
}

function appsNeedingKey(apps: ConnectedApp[]): SafeHtml {
  return apps.length > 0
    ? html`<p>Apps that need the new key:</p>
        <ul>
          ${apps.map((a) => html`<li>${a.appName}</li>`)}
        </ul>`
    : html`<p>No app is connected to this workspace.</p>`;
}

/** The new key, shown this once. */
export function workspaceKeyRotatedPage(
  ctx: PageContext,
  opts: WorkspaceRef & { workspaceKey: string; apps: ConnectedApp[] },
): string {
  return layout(
    ctx,
    `New Workspace Key · ${opts.name}`,
    html`<h1>New Workspace Key of ${opts.name}</h1>
      <p class="notice" role="status">The key was rotated. Tokens minted with the old key no longer work.</p>
      <dl>
        <dt>Workspace ID</dt>
        <dd><code data-copy="the Workspace ID">${opts.workspaceId}</code></dd>
      </dl>
      <h2>New Workspace Key</h2>
      <code class="secret" id="workspace-key">${opts.workspaceKey}</code>
      <p>
        <strong>Copy it now: it will not be shown again.</strong> Keep it somewhere safe and give it only to
        the developers of the apps you connect.
      </p>
      ${appsNeedingKey(opts.apps)}`,
    workspaceTrail(opts),
  );
}

/** The workspace's connected apps; connect by app ID and disconnect for those who may change. */
export function connectedAppsPage(
  ctx: PageContext,
  opts: WorkspaceRef & {
    apps: ConnectedApp[];
    mayChange: boolean;
    notice: string | null;
    error: string | null;
    appId: string;
  },
): string {
  // The ID under the name rather than in a column of its own: a UUID column leaves no room on a phone.
  const headers = ['App', 'Connected (UTC)', ...(opts.mayChange ? ['Action'] : [])];
  const rows = opts.apps.map((a) => [
    html`${a.appName}<br /><span class="hint">App ID <code data-copy="the App ID">${a.appId}</code></span>`,
    when(a.connectedAt),
    ...(opts.mayChange
      ? [
          html`<a href="${base(opts)}/apps/${a.installationId}/disconnect"
            >Disconnect<span class="visually-hidden"> ${a.appName}</span></a
          >`,
        ]
      : []),
  ]);
  const connect = opts.mayChange
    ? html`<h2>Connect an app</h2>
        ${errorBox(opts.error)}
        <form method="post" action="${base(opts)}/apps">
          ${csrfField(ctx)}
          <label for="appId">App ID</label>
          <input
            id="appId"
            name="appId"
            required
            maxlength="100"
            autocomplete="off"
            spellcheck="false"
            aria-describedby="appId-hint"
            value="${opts.appId}"
          />
          <p class="hint" id="appId-hint">
            The app's developer gives you its ID. Once connected, the app can ask for access with the
            Workspace ID and Key.
          </p>
          <button type="submit">Connect the app</button>
        </form>`
    : '';
  return layout(
    ctx,
    `Connected apps · ${opts.name}`,
    html`<h1>Apps connected to ${opts.name}</h1>
      ${noticeBox(opts.notice)} ${opts.mayChange ? '' : errorBox(opts.error)}
      ${
        opts.apps.length > 0
          ? dataTable(headers, rows)
          : html`<p>No app is connected to this workspace yet.</p>`
      }
      ${connect}`,
    workspaceTrail(opts),
  );
}

/** Asks before disconnecting an app. */
export function disconnectAppPage(ctx: PageContext, opts: WorkspaceRef & { app: ConnectedApp }): string {
  return layout(
    ctx,
    `Disconnect ${opts.app.appName}`,
    html`<h1>Disconnect ${opts.app.appName} from ${opts.name}?</h1>
      <p>
        The app (ID <code>${opts.app.appId}</code>) loses access to this workspace at once: its access tokens
        stop working and it can no longer read or load the workspace's data. You can connect it again later by
        its app ID.
      </p>
      <form method="post" action="${base(opts)}/apps/${opts.app.installationId}/disconnect">
        ${csrfField(ctx)}
        <button type="submit" class="danger">Disconnect ${opts.app.appName}</button>
      </form>
      <p><a href="${base(opts)}/apps">No, keep it connected</a></p>`,
    [...workspaceTrail(opts), { label: 'Connected apps', href: `${base(opts)}/apps` }],
  );
}

/** Who made an invitation, in words. */
const inviter = (invitedBy: string | null) =>
  invitedBy === null ? 'unknown' : invitedBy === 'cli' ? 'the operator (command line)' : invitedBy;

/**
 * The invitations not yet accepted: pending ones, then expired ones. Whoever may invite someone
 * with the invitation's role may withdraw it or send it again (a new link; the old one stops).
 */
function invitationsSection(
  ctx: PageContext,
  ws: WorkspaceRef,
  invitations: OpenInvitation[],
  mayInvite: readonly ConsoleRole[],
): SafeHtml {
  if (invitations.length === 0)
    return html`<h2>Invitations</h2>
      <p id="no-invitations">No invitation is waiting to be accepted.</p>`;
  const action = (i: OpenInvitation) =>
    mayInvite.includes(i.role)
      ? html`<form method="post" action="${base(ws)}/invitations/resend" class="inline">
            ${csrfField(ctx)}<input type="hidden" name="invitation" value="${i.id}" />
            <button type="submit" class="secondary">
              Send again<span class="visually-hidden"> to ${i.email}</span>
            </button>
          </form>
          <form method="post" action="${base(ws)}/invitations/revoke" class="inline">
            ${csrfField(ctx)}<input type="hidden" name="invitation" value="${i.id}" />
            <button type="submit" class="danger">
              Withdraw<span class="visually-hidden"> ${i.email}</span>
            </button>
          </form>`
      : html`<span class="hint">An owner can change it.</span>`;
  const rows = invitations.map((i) => [
    html`${i.email}<br /><span class="hint">invited by ${inviter(i.invitedBy)}</span>`,
    ROLE_POWERS[i.role].label,
    i.expired
      ? html`<strong>Expired</strong> ${when(i.expiresAt)}`
      : html`Pending, until ${when(i.expiresAt)}`,
    action(i),
  ]);
  return html`<h2>Invitations</h2>
    <p>
      Invitations not accepted yet. Sending one again makes a new link, valid 24 hours; the old link stops
      working.
    </p>
    ${dataTable(['Invited', 'Role', 'Status (UTC)', 'Action'], rows)}`;
}

/** The members with their roles; owners get a link to manage each one; invitations for those who invite. */
export function membersPage(
  ctx: PageContext,
  opts: WorkspaceRef & {
    members: WorkspaceMember[];
    mayManage: boolean;
    notice: string | null;
    /** Null for whoever may not invite (a viewer): they are not shown. */
    invitations: OpenInvitation[] | null;
    mayInvite: readonly ConsoleRole[];
  },
): string {
  // Name and email in one cell, so the table fits a phone's width.
  const headers = ['Member', 'Role', ...(opts.mayManage ? ['Action'] : [])];
  const rows = opts.members.map((m) => [
    html`${m.displayName}<br /><span class="hint">${m.email}</span>`,
    ROLE_POWERS[m.role].label,
    ...(opts.mayManage
      ? [
          html`<a href="${base(opts)}/members/${m.accountId}"
            >Change<span class="visually-hidden"> ${m.email}</span></a
          >`,
        ]
      : []),
  ]);
  return layout(
    ctx,
    `Members · ${opts.name}`,
    html`<h1>Members of ${opts.name}</h1>
      ${noticeBox(opts.notice)} ${dataTable(headers, rows)}
      ${opts.invitations !== null ? invitationsSection(ctx, opts, opts.invitations, opts.mayInvite) : ''}
      <h2>What each role may do</h2>
      <ul>
        <li>Owner: everything, including rotating the Workspace Key and managing members.</li>
        <li>
          Admin: changes things (connects apps, invites admins and viewers), but neither rotates the key nor
          manages members.
        </li>
        <li>Viewer: looks, changes nothing.</li>
      </ul>
      ${
        opts.mayManage
          ? html`<p class="hint">A workspace always keeps at least one owner.</p>`
          : html`<p id="owners-only">Only an owner (or the operator) can change roles or remove members.</p>`
      }`,
    workspaceTrail(opts),
  );
}

/** One member: change their role, or remove them (owners and the operator only). */
export function memberPage(
  ctx: PageContext,
  opts: WorkspaceRef & { member: WorkspaceMember; isYou: boolean },
): string {
  const m = opts.member;
  const at = `${base(opts)}/members/${m.accountId}`;
  return layout(
    ctx,
    `${m.displayName} · ${opts.name}`,
    html`<h1>${m.displayName} in ${opts.name}</h1>
      <dl>
        <dt>Email</dt>
        <dd>${m.email}</dd>
        <dt>Role</dt>
        <dd id="member-role">${ROLE_POWERS[m.role].label}</dd>
      </dl>
      <h2>Change the role</h2>
      <form method="post" action="${at}/role">
        ${csrfField(ctx)}
        <label for="role">New role</label>
        <select id="role" name="role">
          ${CONSOLE_ROLES.map(
            (r) =>
              html`<option value="${r}" ${r === m.role ? html`selected` : ''}>
                ${ROLE_POWERS[r].label}
              </option>`,
          )}
        </select>
        <button type="submit">Change the role</button>
      </form>
      <h2>Remove from the workspace</h2>
      <p>
        ${opts.isYou ? html`This is you: you lose access to the workspace at once.` : html`${m.email} loses access to the workspace at once.`}
        Their unused invitation links to it stop working too. Their account stays, for their other workspaces.
      </p>
      <form method="post" action="${at}/remove">
        ${csrfField(ctx)}
        <button type="submit" class="danger">Remove ${m.email}</button>
      </form>`,
    [...workspaceTrail(opts), { label: 'Members', href: `${base(opts)}/members` }],
  );
}

/** A page of the audit log, newest first, with a link to older rows. */
export function auditLogPage(
  ctx: PageContext,
  opts: {
    /** Null: the operator's log of the whole service (rows name their workspace). */
    workspace: WorkspaceRef | null;
    rows: ConsoleAuditRow[];
    /** The action the rows are filtered by, null for every action. */
    action: AuditAction | null;
    olderHref: string | null;
    newestHref: string | null;
    /** The same rows, all of them, as CSV. */
    csvHref: string;
  },
): string {
  const ws = opts.workspace;
  const path = ws !== null ? `/console/workspaces/${ws.workspaceId}/audit` : '/console/audit';
  const filter = html`<form method="get" action="${path}" role="search">
    <label for="action">Show</label>
    <select id="action" name="action">
      <option value="">Every action</option>
      ${AUDIT_ACTIONS.map(
        (a) =>
          html`<option value="${a}" ${opts.action === a ? html`selected` : ''}>
            ${auditActionLabel(a)}
          </option>`,
      )}
    </select>
    <button type="submit" class="secondary">Show</button>
  </form>`;
  const title = ws !== null ? `Audit log of ${ws.name}` : 'Audit log of the whole service';
  const headers = ['When', 'Who', 'What', ...(ws === null ? ['Workspace'] : []), 'Detail'];
  const rows = opts.rows.map((a) => [
    when(a.at),
    freeText(a.actor),
    auditWhat(a.action),
    ...(ws === null
      ? [
          a.workspace_id !== null
            ? html`<a href="/console/workspaces/${a.workspace_id}">${a.workspace_id}</a>`
            : '',
        ]
      : []),
    freeText(a.detail),
  ]);
  const pager = [
    opts.newestHref !== null ? html`<a href="${opts.newestHref}">Newest</a>` : '',
    opts.olderHref !== null ? html`<a href="${opts.olderHref}" rel="next">Older</a>` : '',
  ].filter((p) => p !== '');
  return layout(
    ctx,
    title,
    html`<h1>${title}</h1>
      <p>Who did what, when; newest first.</p>
      ${filter}
      <p>
        <a href="${opts.csvHref}" download
          >Download ${opts.action !== null ? 'these rows' : 'the whole log'} (CSV)</a
        >
      </p>
      ${
        opts.rows.length > 0
          ? dataTable(headers, rows)
          : html`<p>
              ${opts.action !== null ? 'No such action is recorded here.' : 'Nothing has been recorded here yet.'}
            </p>`
      }
      ${
        pager.length > 0
          ? html`<nav aria-label="Audit log pages">
              <p class="pager">${pager.map((p, i) => (i > 0 ? html` · ${p}` : p))}</p>
            </nav>`
          : ''
      }`,
    ws !== null ? workspaceTrail(ws) : [OPERATOR],
  );
}
