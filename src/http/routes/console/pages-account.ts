// The pages of a person's own account and of the way back in: the account page (display name,
// email, password), "forgot password", the reset link's page, and the operator's reset link.
import { html } from './html.js';
import { when } from './times.js';
import {
  csrfField,
  displayNameField,
  errorBox,
  layout,
  newPasswordFields,
  OPERATOR,
  type Crumb,
  type PageContext,
} from './pages.js';

/** The pages of the way back in sit under the sign-in page. */
const SIGN_IN: Crumb = { label: 'Sign in', href: '/console/sign-in' };

const noticeBox = (message: string | null) =>
  message !== null ? html`<p class="notice" role="status">${message}</p>` : '';
const minutes = (ms: number) => Math.round(ms / 60_000);

/** The signed-in person's account: display name, email, and a password change. */
export function accountPage(
  ctx: PageContext,
  opts: {
    email: string;
    displayName: string;
    notice: string | null;
    nameError: string | null;
    passwordError: string | null;
  },
): string {
  return layout(
    ctx,
    'Your account',
    html`<h1>Your account</h1>
      ${noticeBox(opts.notice)}
      <dl>
        <dt>Email</dt>
        <dd id="account-email">${opts.email}</dd>
      </dl>
      <p class="hint">Your email is your sign-in name; it cannot be changed here.</p>
      <h2>Display name</h2>
      ${errorBox(opts.nameError)}
      <form method="post" action="/console/account/name">
        ${csrfField(ctx)} ${displayNameField(opts.displayName)}
        <button type="submit">Save the name</button>
      </form>
      <h2>Password</h2>
      ${errorBox(opts.passwordError)}
      <form method="post" action="/console/account/password">
        ${csrfField(ctx)}
        <input type="hidden" name="username" value="${opts.email}" autocomplete="username" />
        <label for="current-password">Current password</label>
        <input
          id="current-password"
          name="current"
          type="password"
          autocomplete="current-password"
          required
        />
        ${newPasswordFields('new-password', { password: 'New password', again: 'Type the new password again' })}
        <p class="hint">Changing it signs you out everywhere else you are signed in.</p>
        <button type="submit">Change the password</button>
      </form>`,
  );
}

/** "Forgot your password?": a form that mails a link, or, without mail, who to ask. */
export function forgotPasswordPage(
  ctx: PageContext,
  opts: { byMail: boolean; email: string; error: string | null; ttlMs: number },
): string {
  const body = opts.byMail
    ? html`<p>
          Enter your sign-in email. If it has a console account, we send it a link to choose a new password.
          The link works once, for ${minutes(opts.ttlMs)} minutes.
        </p>
        ${errorBox(opts.error)}
        <form method="post" action="/console/forgot-password">
          ${csrfField(ctx)}
          <label for="email">Email</label>
          <input
            id="email"
            name="email"
            type="email"
            autocomplete="username"
            required
            value="${opts.email}"
          />
          <button type="submit">Send me a link</button>
        </form>`
    : html`<p id="ask-operator">
        This service does not send mail. Ask its operator for a password reset link: a one-time link that lets
        you choose a new password.
      </p>`;
  return layout(
    ctx,
    'Forgot your password?',
    html`<h1>Forgot your password?</h1>
      ${body}`,
    [SIGN_IN],
  );
}

/** The same answer whether or not the address has an account. */
export function resetMailSentPage(ctx: PageContext, opts: { email: string; ttlMs: number }): string {
  return layout(
    ctx,
    'Check your mail',
    html`<h1>Check your mail</h1>
      <p class="notice" role="status">
        If ${opts.email} has a console account, a message with a link to choose a new password is on its way.
      </p>
      <p>
        The link works once, for ${minutes(opts.ttlMs)} minutes. Nothing came? Look in the spam folder, check
        the address, or ask the service's operator.
      </p>`,
    [SIGN_IN],
  );
}

/** The page a reset link opens: choose a new password. */
export function resetPasswordPage(
  ctx: PageContext,
  opts: { token: string; email: string; error: string | null },
): string {
  return layout(
    ctx,
    'Choose a new password',
    html`<h1>Choose a new password</h1>
      <p>For the console account <strong>${opts.email}</strong>.</p>
      ${errorBox(opts.error)}
      <form method="post" action="/console/reset-password">
        ${csrfField(ctx)}
        <input type="hidden" name="token" value="${opts.token}" />
        <input type="hidden" name="username" value="${opts.email}" autocomplete="username" />
        ${newPasswordFields('new-password', { password: 'New password', again: 'Type the new password again' })}
        <p class="hint">Setting it signs this account out everywhere it is signed in.</p>
        <button type="submit">Set the new password</button>
      </form>`,
    [SIGN_IN],
  );
}

/** The operator's form that issues a reset link, alone (with what went wrong). */
export function resetLinkFormPage(ctx: PageContext, opts: { email: string; error: string | null }): string {
  return layout(
    ctx,
    'Password reset link',
    html`<h1>Issue a password reset link</h1>
      ${errorBox(opts.error)} ${resetLinkForm(ctx, opts.email)}`,
    [OPERATOR],
  );
}

/** The form itself, also on the operator's start page. */
export function resetLinkForm(ctx: PageContext, email = '') {
  return html`<form method="post" action="/console/operator/reset-links">
    ${csrfField(ctx)}
    <label for="reset-email">Account's email</label>
    <input
      id="reset-email"
      name="email"
      type="email"
      required
      maxlength="254"
      value="${email}"
      aria-describedby="reset-email-hint"
    />
    <p class="hint" id="reset-email-hint">
      A one-time link, valid for an hour, to choose a new password. It gives the account no other rights.
    </p>
    <button type="submit">Issue reset link</button>
  </form>`;
}

/** A reset link the operator issued, shown once. */
export function resetLinkIssuedPage(
  ctx: PageContext,
  opts: { email: string; link: string; expiresAt: Date },
): string {
  return layout(
    ctx,
    'Password reset link',
    html`<h1>Password reset link for ${opts.email}</h1>
      <p>
        Send this link to ${opts.email} by a way you trust. It works once, until ${when(opts.expiresAt)}, and
        is not shown again. A newer link or a password change voids it; using it signs the account out
        everywhere.
      </p>
      <code class="secret" id="reset-link">${opts.link}</code>`,
    [OPERATOR],
  );
}
