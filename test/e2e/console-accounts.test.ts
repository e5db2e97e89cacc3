// The way back in and the invitations list in Chromium, on SQLite and PostgreSQL, at desktop and
// phone widths: a person who forgot their password asks for a link from the sign-in page, reads it
// in the mail a real SMTP server received, sets a new password and signs in (their other session
// ended); an owner lists the open invitations, withdraws one and sends another again.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { consoleSuite, DESKTOP, PHONE } from './support/harness.js';
import { pageProblems } from './support/a11y.js';
import {
  acceptInvitation,
  inviteFromConsole,
  signIn,
  signOut,
  uniqueEmail,
  workspaceWithOwner,
} from './support/people.js';
import { resetLinkIn, startSmtpSink } from '../support/smtp-sink.js';

const NEW_PASSWORD = 'a new passphrase after forgetting';

const sink = await startSmtpSink();
after(() => sink.close());

await consoleSuite(
  'console accounts in Chromium',
  (c) => {
    test('a person who forgot their password gets a link by mail, sets a new one and signs in', async () => {
      const problems: string[] = [];
      const check = async (page: Parameters<typeof pageProblems>[0], what: string) => {
        for (const p of await pageProblems(page))
          problems.push(`${what} at ${page.viewportSize()?.width} px: ${p}`);
      };
      for (const viewport of [DESKTOP, PHONE]) {
        const { owner } = await workspaceWithOwner(c, `Recovery ${viewport.width}`, viewport);
        const elsewhere = await c.newPage(viewport);
        await signIn(elsewhere, owner.email);
        const page = owner.page;
        await signOut(page);

        await page.getByRole('link', { name: 'Forgot your password?' }).click();
        await page.getByRole('heading', { level: 1, name: 'Forgot your password?' }).waitFor();
        await check(page, 'forgot password');
        await page.getByLabel('Email').fill(owner.email);
        await page.getByRole('button', { name: 'Send me a link' }).click();
        await page.getByRole('heading', { level: 1, name: 'Check your mail' }).waitFor();
        assert.match(
          await page.getByRole('status').innerText(),
          new RegExp(`If ${owner.email.replace(/\./g, '\\.')} has`),
        );
        await check(page, 'check your mail');

        const link = resetLinkIn(await sink.waitForMail(owner.email));
        assert.ok(link.startsWith(c.url('/console/reset-password?token=dxr_')), link);
        await page.goto(link);
        await page.getByRole('heading', { level: 1, name: 'Choose a new password' }).waitFor();
        await check(page, 'choose a new password');
        await page.getByLabel('New password', { exact: true }).fill(NEW_PASSWORD);
        await page.getByLabel('Type the new password again').fill(NEW_PASSWORD);
        await page.getByRole('button', { name: 'Set the new password' }).click();
        await page.waitForURL('**/console/sign-in?reset=1');
        assert.match(await page.getByRole('status').innerText(), /Your new password is set/);
        await signIn(page, owner.email, NEW_PASSWORD);

        // The session opened with the old password elsewhere is over; the link worked once.
        await elsewhere.goto('/console/home');
        await elsewhere.waitForURL('**/console/sign-in');
        const again = await c.newPage(viewport);
        assert.equal((await again.goto(link))?.status(), 410);
        await again.getByRole('heading', { name: 'Link no longer works' }).waitFor();
      }
      assert.deepEqual(problems, []);
    });

    test('an owner lists the open invitations, withdraws one and sends another again', async () => {
      const problems: string[] = [];
      for (const viewport of [DESKTOP, PHONE]) {
        const name = `Invitations ${viewport.width}`;
        const { workspaceId, owner } = await workspaceWithOwner(c, name, viewport);
        const page = owner.page;
        const workspace = `/console/workspaces/${workspaceId}`;
        await page.goto(workspace);
        // The form starts on the least powerful role.
        assert.equal(await page.getByLabel('Role').inputValue(), 'viewer');
        const withdrawn = uniqueEmail('withdrawn');
        const withdrawnLink = await inviteFromConsole(page, withdrawn, 'Viewer');
        await page.goto(workspace);
        const renewed = uniqueEmail('renewed');
        const oldLink = await inviteFromConsole(page, renewed, 'Admin');

        await page.goto(workspace);
        await page.getByRole('link', { name: 'Members and roles' }).click();
        await page.getByRole('heading', { level: 2, name: 'Invitations' }).waitFor();
        const invitations = page.getByRole('table').nth(1);
        const listed = await invitations.innerText();
        for (const text of [
          withdrawn,
          renewed,
          'Viewer',
          'Admin',
          `invited by ${owner.email}`,
          'Pending, until',
        ])
          assert.ok(listed.includes(text), `${text} in ${listed}`);
        for (const p of await pageProblems(page)) problems.push(`members at ${viewport.width} px: ${p}`);

        await page.getByRole('button', { name: `Withdraw ${withdrawn}` }).click();
        assert.match(await page.getByRole('status').innerText(), /withdrawn/);
        assert.ok(!(await page.locator('main').innerText()).includes(withdrawn));

        await page.getByRole('button', { name: `Send again to ${renewed}` }).click();
        await page.getByRole('heading', { name: `Invitation link for ${renewed}` }).waitFor();
        const newLink = (await page.locator('#invitation-link').innerText()).trim();
        assert.notEqual(newLink, oldLink);

        // The withdrawn and the replaced links say to ask for a new one; the new one works.
        for (const dead of [withdrawnLink, oldLink]) {
          const p = await c.newPage(viewport);
          assert.equal((await p.goto(dead))?.status(), 410);
          assert.match(await p.locator('main').innerText(), /Ask for a new one/);
        }
        const invitee = await c.newPage(viewport);
        await acceptInvitation(invitee, newLink, 'Rene Renewed');
        await signIn(invitee, renewed);
        await invitee.getByRole('link', { name, exact: true }).click();
        assert.equal((await invitee.locator('dt:text-is("Your role") + dd').innerText()).trim(), 'Admin');
      }
      assert.deepEqual(problems, []);
    });
  },
  sink.env,
);
