// The console's pages as HTML: one layout, then one function per page. Pure functions of what
// the route hands them, so every page is easy to read and to test.
import { html, type SafeHtml } from './html.js';
import { when } from './times.js';
import { auditActionLabel } from '../../../domain/console/audit.js';
import { CONSOLE_ROLES, ROLE_POWERS, type ConsoleRole } from '../../../domain/console/roles.js';
import type { Membership } from '../../../domain/console/people.js';
import type { ConsoleAuditRow } from '../../../storage/db/console-tables.js';

/** What every page needs: the CSRF token of its forms, and who is signed in (if anyone). */
export interface PageContext {
  csrf: string;
  signedInAs: { email: string; displayName: string; isOperator: boolean } | null;
}

/** A page above this one on the way from its section's first page: a step of the breadcrumb trail. */
export interface Crumb {
  label: string;
  href: string;
}

/** The first page of the workspaces' section, and of the operator's. */
export const WORKSPACES: Crumb = { label: 'Your workspaces', href: '/console/home' };
export const OPERATOR: Crumb = { label: 'Operator', href: '/console/operator' };

/** The trail of a workspace's pages: its section, then the workspace. */
export const workspaceTrail = (ws: { workspaceId: number; name: string }): Crumb[] => [
  WORKSPACES,
  { label: ws.name, href: `/console/workspaces/${ws.workspaceId}` },
];

export const csrfField = (ctx: PageContext) => html`<input type="hidden" name="_csrf" value="${ctx.csrf}" />`;

/** An audit row's action: plain words, with the action's name for those who search the log. */
export const auditWhat = (action: string) =>
  html`${auditActionLabel(action)} <code class="action">${action}</code>`;

/** Free text in a table cell (an address, a name, an audit detail): it may break anywhere, so a long
 * one never widens its table past the screen; the other cells keep their words whole. */
export const freeText = (text: string | null) =>
  text === null ? '' : html`<span class="wrap">${text}</span>`;

/** A fieldset of checkboxes named `name` (a form sends the ticked ones' values): the
 * dataset's apps, a webhook's events. */
export function checkboxes(
  legend: string,
  name: string,
  items: readonly { value: string; label: SafeHtml | string; checked: boolean }[],
): SafeHtml {
  return html`<fieldset>
    <legend>${legend}</legend>
    ${items.map(
      (item, i) =>
        html`<div class="check">
          <input
            type="checkbox"
            id="${name}-${i}"
            name="${name}"
            value="${item.value}"
            ${item.checked ? html`checked` : ''}
          />
          <label for="${name}-${i}">${item.label}</label>
        </div>`,
    )}
  </fieldset>`;
}

/**
 * The frame of every page: skip link, a header with the console's sections and sign-out for whoever
 * is signed in, the trail of the pages above this one (none for a section's first page), one main
 * landmark.
 */
export function layout(
  ctx: PageContext,
  title: string,
  body: SafeHtml,
  trail: readonly Crumb[] = [],
): string {
  const who = ctx.signedInAs;
  return html`<!doctype html>
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <title>${title} · Dataset Exchange console</title>
        <link rel="stylesheet" href="/console/console.css" />
        <script src="/console/console.js" defer></script>
      </head>
      <body>
        <a class="skip" href="#main">Skip to content</a>
        <header>
          <a class="brand" href="/console/home">Dataset Exchange</a>
          ${
            who !== null
              ? html`<nav aria-label="Console">
                    <a href="${WORKSPACES.href}">${WORKSPACES.label}</a>
                    ${who.isOperator ? html`<a href="${OPERATOR.href}">${OPERATOR.label}</a>` : ''}
                    <a href="/console/account">Your account</a>
                  </nav>
                  <form method="post" action="/console/sign-out">
                    ${csrfField(ctx)}<span>${who.displayName} (${who.email})</span>
                    <button type="submit" class="secondary">Sign out</button>
                  </form>`
              : ''
          }
        </header>
        ${
          trail.length > 0
            ? html`<nav aria-label="Breadcrumb" class="trail">
                <ol>
                  ${trail.map((c) => html`<li><a href="${c.href}">${c.label}</a></li>`)}
                  <li aria-current="page">${title}</li>
                </ol>
              </nav>`
            : ''
        }
        <main id="main">${body}</main>
      </body>
    </html> `.value;
}

/** The field that confirms an irreversible change by its target's name typed (`confirmName`),
 * marked invalid when the last attempt was refused. */
export function confirmNameField(what: string, name: string, refused: boolean): SafeHtml {
  return html`<label for="confirmName">Type the ${what}'s name, <strong>${name}</strong>, to confirm</label>
    <input
      id="confirmName"
      name="confirmName"
      required
      autocomplete="off"
      ${refused ? html`aria-describedby="form-error" aria-invalid="true"` : ''}
    />`;
}

/** The field of a person's display name, filled with `value`. */
export function displayNameField(value: string): SafeHtml {
  return html`<label for="displayName">Your name</label>
    <input
      id="displayName"
      name="displayName"
      autocomplete="name"
      required
      maxlength="200"
      value="${value}"
    />`;
}

/** The fields that choose a new password (posted as `password` and `confirm`): the password with
 * its rule, then the same typed again. `id` is the password input's, unique on its page. */
export function newPasswordFields(id: string, labels: { password: string; again: string }): SafeHtml {
  return html`<label for="${id}">${labels.password}</label>
    <input
      id="${id}"
      name="password"
      type="password"
      autocomplete="new-password"
      required
      minlength="12"
      maxlength="256"
      aria-describedby="${id}-hint"
    />
    <p class="hint" id="${id}-hint">At least 12 characters. A few unrelated words make a good one.</p>
    <label for="confirm">${labels.again}</label>
    <input id="confirm" name="confirm" type="password" autocomplete="new-password" required />`;
}

export const errorBox = (message: string | null) =>
  message !== null ? html`<p class="error" role="alert" id="form-error">${message}</p>` : '';

/** How a person who forgot their password gets back in: by mail, or from the operator. */
export type Recovery = 'mail' | 'operator';

/** Sign-in with email and password; `next` is where to go after (an invitation link). */
export function signInPage(
  ctx: PageContext,
  opts: {
    error: string | null;
    email: string;
    notice: string | null;
    next?: string | null;
    recovery: Recovery;
  },
): string {
  const forgot: Record<Recovery, SafeHtml> = {
    mail: html`<p><a href="/console/forgot-password">Forgot your password?</a></p>`,
    operator: html`<p class="hint" id="forgot-password">
      Forgot your password? Ask the service's operator for a password reset link.
    </p>`,
  };
  return layout(
    ctx,
    'Sign in',
    html`<h1>Sign in</h1>
      ${opts.notice !== null ? html`<p class="notice" role="status">${opts.notice}</p>` : ''}
      ${errorBox(opts.error)}
      <form method="post" action="/console/sign-in">
        ${csrfField(ctx)}
        ${opts.next != null ? html`<input type="hidden" name="next" value="${opts.next}" />` : ''}
        <label for="email">Email</label>
        <input id="email" name="email" type="email" autocomplete="username" required value="${opts.email}" />
        <label for="password">Password</label>
        <input id="password" name="password" type="password" autocomplete="current-password" required />
        <button type="submit">Sign in</button>
      </form>
      ${forgot[opts.recovery]}`,
  );
}

/** Who opens an invitation to an existing account: that account, someone else, or nobody signed in. */
export type Opener = 'invitee' | 'someoneElse' | 'signedOut';

/**
 * The page an invitation link opens. A new person chooses a display name and a password. Someone
 * who already has an account accepts while signed in as it, with one button; the page asks anyone
 * else to sign in as that account first (passwords are typed on the sign-in page only).
 */
export function acceptPage(
  ctx: PageContext,
  opts: {
    token: string;
    /** The invitation link's own path and query, to come back to after signing in. */
    here: string;
    email: string;
    displayName: string;
    workspaceName: string | null;
    role: ConsoleRole | null;
    hasAccount: boolean;
    opener: Opener;
    error: string | null;
  },
): string {
  const newPerson = html`${displayNameField(opts.displayName)}
    ${newPasswordFields('password', { password: 'Choose a password', again: 'Type the password again' })}
    <button type="submit">Set password</button>`;
  const form = (fields: SafeHtml) =>
    html`<form method="post" action="/console/invitation">
      ${csrfField(ctx)}
      <input type="hidden" name="token" value="${opts.token}" />
      ${fields}
    </form>`;
  const signInHref = `/console/sign-in?${new URLSearchParams({ next: opts.here, email: opts.email }).toString()}`;
  const existing: Record<Opener, SafeHtml> = {
    invitee: html`<p>You are signed in as ${opts.email}.</p>
      ${form(html`<button type="submit">Accept invitation</button>`)}`,
    someoneElse: html`<p>
        You are signed in as someone else. To accept, switch to <strong>${opts.email}</strong>: you are signed
        out here and brought back to this link once you sign in as that account.
      </p>
      <form method="post" action="/console/sign-out">
        ${csrfField(ctx)}
        <input type="hidden" name="next" value="${opts.here}" />
        <button type="submit" class="secondary">Switch to ${opts.email}</button>
      </form>`,
    signedOut: html`<p>You already have a console account. Sign in with it to accept.</p>
      <p><a href="${signInHref}">Sign in to accept</a></p>
      <p class="hint">Forgot its password? The sign-in page tells you how to get back in.</p>`,
  };
  const what =
    opts.workspaceName !== null && opts.role !== null
      ? html`You are invited to <strong>${opts.workspaceName}</strong> as
          ${ROLE_POWERS[opts.role].label.toLowerCase()}.`
      : html`You are invited as the service's operator.`;
  return layout(
    ctx,
    'Accept invitation',
    html`<h1>Accept your invitation</h1>
      <p>${what} Your sign-in email is <strong>${opts.email}</strong>.</p>
      ${errorBox(opts.error)} ${opts.hasAccount ? existing[opts.opener] : form(newPerson)}`,
  );
}

/** An invitation link that was already accepted: sign in instead (410). */
export function invitationUsedPage(ctx: PageContext, detail: string): string {
  return layout(
    ctx,
    'Invitation already accepted',
    html`<h1>Invitation already accepted</h1>
      <p>${detail}</p>
      <p><a href="/console/sign-in">Sign in</a></p>`,
  );
}

/** After sign-in: the member's workspaces; the operator also sees every workspace. */
export function homePage(
  ctx: PageContext,
  opts: { memberships: Membership[]; operatorWorkspaces: { id: number; name: string }[] | null },
): string {
  const mine =
    opts.memberships.length > 0
      ? html`<ul>
          ${opts.memberships.map(
            (m) =>
              html`<li>
                <a href="/console/workspaces/${m.workspaceId}">${m.workspaceName}</a>
                (${ROLE_POWERS[m.role].label})
              </li>`,
          )}
        </ul>`
      : html`<p>You are not a member of any workspace yet.</p>`;
  const all =
    opts.operatorWorkspaces !== null
      ? html`<h2>All workspaces</h2>
          <p>You are the operator: you can open any workspace and invite its owner.</p>
          <p><a href="/console/audit">The whole service's audit log</a></p>
          ${dataTable(
            ['Workspace ID', 'Name'],
            opts.operatorWorkspaces.map((w) => [
              w.id,
              html`<a href="/console/workspaces/${w.id}">${w.name}</a>`,
            ]),
          )}`
      : '';
  const operator =
    opts.operatorWorkspaces !== null
      ? html`<h2>Operator</h2>
          <p>
            <a href="/console/operator">Operator pages</a>: apps, workspaces, proxy IDs, the service's health.
          </p>`
      : '';
  return layout(
    ctx,
    'Home',
    html`<h1>Your workspaces</h1>
      ${mine}${operator}${all}`,
  );
}

/** A workspace's home: its Workspace ID, the viewer's role, members; invitations when allowed. */
export function workspacePage(
  ctx: PageContext,
  opts: {
    workspaceId: number;
    name: string;
    roleLabel: string;
    mayInvite: readonly ConsoleRole[];
    /** Whether the reader may rename the workspace (owners, the operator). */
    renames: boolean;
    members: { email: string; displayName: string; role: ConsoleRole }[];
    audit: ConsoleAuditRow[] | null;
  },
): string {
  const rename = opts.renames
    ? html`<h2>Rename the workspace</h2>
        <form method="post" action="/console/workspaces/${opts.workspaceId}/name">
          ${csrfField(ctx)}
          <label for="workspace-name">Workspace name</label>
          <input id="workspace-name" name="name" required maxlength="200" value="${opts.name}" />
          <p class="hint">Apps connected before keep the name their installation was made with.</p>
          <button type="submit" class="secondary">Rename</button>
        </form>`
    : '';
  const invite =
    opts.mayInvite.length > 0
      ? html`<h2>Invite a member</h2>
          <form method="post" action="/console/workspaces/${opts.workspaceId}/invitations">
            ${csrfField(ctx)}
            <label for="email">Email</label>
            <input id="email" name="email" type="email" required />
            <label for="role">Role</label>
            <select id="role" name="role">
              ${leastPowerfulFirst(opts.mayInvite).map(
                (r, i) =>
                  html`<option value="${r}" ${i === 0 ? html`selected` : ''}>
                    ${ROLE_POWERS[r].label}
                  </option>`,
              )}
            </select>
            <button type="submit">Create invitation link</button>
          </form>`
      : '';
  const audit =
    opts.audit !== null
      ? html`<h2>Recent activity</h2>
          ${dataTable(
            ['When', 'Who', 'What', 'Detail'],
            opts.audit.map((a) => [when(a.at), freeText(a.actor), auditWhat(a.action), freeText(a.detail)]),
          )}`
      : '';
  return layout(
    ctx,
    opts.name,
    html`<h1>${opts.name}</h1>
      <dl>
        <dt>Workspace ID</dt>
        <dd><code id="workspace-id" data-copy="the Workspace ID">${opts.workspaceId}</code></dd>
        <dt>Your role</dt>
        <dd id="your-role">${opts.roleLabel}</dd>
      </dl>
      <p class="hint">An app developer needs the Workspace ID and the Workspace Key to connect an app.</p>
      ${workspaceSettingsNav(opts.workspaceId, opts.audit !== null)}
      <h2>Members</h2>
      ${dataTable(
        ['Name', 'Email', 'Role'],
        opts.members.map((m) => [m.displayName, m.email, ROLE_POWERS[m.role].label]),
      )}
      ${invite}${rename}${audit}`,
    [WORKSPACES],
  );
}

/** The roles from the least powerful (the invitation form's default) to the most. */
function leastPowerfulFirst(roles: readonly ConsoleRole[]): ConsoleRole[] {
  return [...CONSOLE_ROLES].reverse().filter((r) => roles.includes(r));
}

/** Links to the workspace's settings pages (pages-workspace.ts); the audit log for its readers. */
function workspaceSettingsNav(workspaceId: number, readsAudit: boolean): SafeHtml {
  const base = `/console/workspaces/${workspaceId}`;
  return html`<nav aria-label="Workspace settings">
    <ul>
      <li><a href="${base}/datasets">Datasets and loads</a></li>
      <li><a href="${base}/loads">Every load, by status</a></li>
      <li><a href="${base}/key">Workspace Key</a></li>
      <li><a href="${base}/apps">Connected apps</a></li>
      <li><a href="${base}/members">Members and roles</a></li>
      ${readsAudit ? html`<li><a href="${base}/audit">Audit log</a></li>` : ''}
    </ul>
  </nav>`;
}

/** A one-time invitation link, shown once. */
export function invitationCreatedPage(
  ctx: PageContext,
  opts: { trail: readonly Crumb[]; email: string; link: string; expiresAt: Date },
): string {
  return layout(
    ctx,
    'Invitation link',
    html`<h1>Invitation link for ${opts.email}</h1>
      <p>
        Send this link to ${opts.email}. It works once, until ${when(opts.expiresAt)}, and is not shown again.
      </p>
      <code class="secret" id="invitation-link">${opts.link}</code>`,
    opts.trail,
  );
}

/** Any refusal or failure, as a page. */
export function errorPage(ctx: PageContext, status: number, title: string, detail: string): string {
  return layout(
    ctx,
    title,
    html`<h1>${title}</h1>
      <p>${detail}</p>
      <p><a href="/console/home">Go to the console home</a></p>
      <p class="hint">Error ${status}</p>`,
  );
}

/** A table of `rows` under column `headers`, scrollable on its own on a narrow screen. */
export function dataTable(headers: readonly string[], rows: readonly (readonly unknown[])[]): SafeHtml {
  return html`<div class="table-wrap">
    <table>
      <thead>
        <tr>
          ${headers.map((h) => html`<th scope="col">${h}</th>`)}
        </tr>
      </thead>
      <tbody>
        ${rows.map(
          (row) =>
            html`<tr>
              ${row.map((cell) => html`<td>${cell}</td>`)}
            </tr>`,
        )}
      </tbody>
    </table>
  </div>`;
}
