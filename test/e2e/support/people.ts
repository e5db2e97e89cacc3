// What a person does in the console, as a person does it: by the labels and names on the page and
// the keyboard, never by CSS selectors or by posting forms behind the page's back. Flows for new
// pages start from these.
import assert from 'node:assert/strict';
import type { Page } from 'playwright-core';
import type { ConsoleE2E } from './harness.js';

/** Long enough for the console's rule (12+), and typed like one. */
export const PASSWORD = 'correct horse battery staple';

let counter = 0;
/** A fresh address per call: accounts and the sign-in rate limit are per email. */
export function uniqueEmail(who: string): string {
  return `${who}.${++counter}.${process.pid}@example.org`;
}

/** The session cookie the browser holds for the console, or undefined. */
export async function sessionCookie(page: Page): Promise<string | undefined> {
  const cookies = await page.context().cookies();
  return cookies.find((c) => c.name === 'dx_console')?.value;
}

/** Opens an invitation link and accepts it with a display name and a new password. */
export async function acceptInvitation(page: Page, link: string, name: string, password = PASSWORD) {
  await page.goto(link);
  await page.getByLabel('Your name').fill(name);
  await page.getByLabel('Choose a password').fill(password);
  await page.getByLabel('Type the password again').fill(password);
  await page.getByRole('button', { name: 'Set password' }).click();
  await page.waitForURL('**/console/sign-in?accepted=1');
}

/** Signs in from the sign-in page (Enter in the password field submits) and lands on home. */
export async function signIn(page: Page, email: string, password = PASSWORD) {
  await page.goto('/console/sign-in');
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password').fill(password);
  await page.getByLabel('Password').press('Enter');
  await page.waitForURL('**/console/home');
}

/** Signs out with the header's button. */
export async function signOut(page: Page) {
  await page.getByRole('button', { name: 'Sign out' }).click();
  await page.waitForURL('**/console/sign-in');
}

/** Opens a workspace from the home page by its name, as a person would. */
export async function openWorkspace(page: Page, name: string) {
  await page.goto('/console/home');
  await page.getByRole('link', { name, exact: true }).first().click();
  await page.waitForURL('**/console/workspaces/*');
}

/** The Workspace ID as the workspace page shows it, next to its "Workspace ID" term. */
export async function workspaceIdOnPage(page: Page): Promise<string> {
  return (await page.locator('dt:text-is("Workspace ID") + dd code').innerText()).trim();
}

/** On a workspace page: invites `email` with `role` (its label) and returns the one-time link. */
export async function inviteFromConsole(page: Page, email: string, roleLabel: string): Promise<string> {
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Role').selectOption({ label: roleLabel });
  await page.getByRole('button', { name: 'Create invitation link' }).click();
  await page.getByRole('heading', { name: `Invitation link for ${email}` }).waitFor();
  return (await page.locator('#invitation-link').innerText()).trim();
}

/** A workspace made from the CLI (`dx workspaces create`), with its ID and key. */
export async function createWorkspace(
  c: ConsoleE2E,
  name: string,
): Promise<{ workspaceId: number; workspaceKey: string }> {
  const out = JSON.parse(await c.dx('workspaces', 'create', '--name', name, '--json')) as {
    workspaceId: number;
    workspaceKey: string;
  };
  assert.ok(Number.isInteger(out.workspaceId) && out.workspaceKey.length > 0, JSON.stringify(out));
  return out;
}

/** The operator's `dx workspaces invite-owner`: the one-time link it prints. */
export async function inviteOwner(c: ConsoleE2E, workspaceId: number, email: string): Promise<string> {
  const out = await c.dx('workspaces', 'invite-owner', '--workspace', String(workspaceId), '--email', email);
  const link = /https?:\/\/\S+\/console\/invitation\?token=dxi_\S+/.exec(out)?.[0];
  assert.ok(link !== undefined, `no link in:\n${out}`);
  assert.ok(link.startsWith(c.baseUrl), link);
  return link;
}

/** A signed-in member: who they are and their page (in a context of its own). */
export interface Member {
  page: Page;
  email: string;
  name: string;
}

/** A workspace from the CLI with its owner invited by the CLI, accepted and signed in. */
export async function workspaceWithOwner(
  c: ConsoleE2E,
  workspaceName: string,
  viewport?: { width: number; height: number },
): Promise<{ workspaceId: number; workspaceKey: string; owner: Member }> {
  const ws = await createWorkspace(c, workspaceName);
  const email = uniqueEmail('owner');
  const page = await c.newPage(viewport);
  await acceptInvitation(page, await inviteOwner(c, ws.workspaceId, email), 'Olive Owner');
  await signIn(page, email);
  return { ...ws, owner: { page, email, name: 'Olive Owner' } };
}

/** A member invited from the owner's console page, accepted and signed in in a fresh context. */
export async function memberInvitedBy(
  c: ConsoleE2E,
  inviter: Member,
  workspaceId: number,
  roleLabel: string,
  viewport?: { width: number; height: number },
): Promise<Member> {
  await inviter.page.goto(`/console/workspaces/${workspaceId}`);
  const email = uniqueEmail(roleLabel.toLowerCase());
  const link = await inviteFromConsole(inviter.page, email, roleLabel);
  const page = await c.newPage(viewport);
  const name = `Vic ${roleLabel}`;
  await acceptInvitation(page, link, name);
  await signIn(page, email);
  return { page, email, name };
}

/** The operator, made with `dx operators create --password-stdin`, signed in. */
export async function operator(c: ConsoleE2E, viewport?: { width: number; height: number }): Promise<Member> {
  const email = uniqueEmail('operator');
  await c.dxWithInput(`${PASSWORD}\n`, 'operators', 'create', '--email', email, '--password-stdin');
  const page = await c.newPage(viewport);
  await signIn(page, email);
  return { page, email, name: email };
}
