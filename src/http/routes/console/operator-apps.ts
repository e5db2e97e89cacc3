// The operator's apps: list, create, add a key, revoke a key (after a confirmation page), and the
// download of a private key shown on a result page. The same domain functions as `dx apps`.
import { createPrivateKey } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { problem, ProblemError } from '../../../errors.js';
import type { ApiDeps } from '../../deps.js';
import { audit } from '../../../domain/console/audit.js';
import { consoleDb } from '../../../domain/console/db.js';
import {
  addAppKey,
  appKeyLastUses,
  createApp,
  generateKeyPair,
  getApp,
  KEY_ALGORITHMS,
  listAppKeys,
  listAppsByName,
  renameApp,
  revokeAppKey,
} from '../../../domain/identity/apps.js';
import { listInstallations } from '../../../domain/identity/installations.js';
import { getWebhook, removeWebhook, setWebhook } from '../../../domain/webhooks/webhooks.js';
import type { AppRow } from '../../../storage/db/tables.js';
import { pageContext, sendPage } from './context.js';
import { checkedValues, field } from './form.js';
import { namePageQuery } from './name-lists.js';
import { actorOf, oneOf, param, requiredName, requireOperator } from './operator-common.js';
import {
  appCreatedPage,
  appPage,
  appsPage,
  keyAddedPage,
  OPERATOR_BASE,
  OPERATOR_LIST_PAGE,
  removeWebhookPage,
  revokeKeyPage,
  webhookSetPage,
  type AppDetail,
  type AppListing,
} from './pages-operator.js';

const APP_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const KID = /^[A-Za-z0-9_-]{1,64}$/;
const FILE_STEM = /^[A-Za-z0-9-]{1,120}$/;

/** /console/operator/apps… and /console/operator/private-key. */
export function operatorAppRoutes(scope: FastifyInstance, deps: ApiDeps): void {
  const listing = async (app: AppRow): Promise<AppListing> => {
    const [keys, lastUses] = await Promise.all([
      listAppKeys(deps.db, app.id),
      appKeyLastUses(deps.db, app.id),
    ]);
    return {
      id: app.id,
      name: app.name,
      ownWorkspaceId: app.owner_workspace_id,
      createdAt: app.created_at,
      keys: keys.map((k) => ({
        kid: k.kid,
        alg: k.alg,
        createdAt: k.created_at,
        revokedAt: k.revoked_at,
        lastUsedAt: lastUses.get(k.kid) ?? null,
      })),
    };
  };

  scope.get('/operator/apps', async (request, reply) => {
    requireOperator(request);
    const { search, query } = namePageQuery(request.query, OPERATOR_LIST_PAGE);
    const page = await listAppsByName(deps.db, query);
    const apps = await Promise.all(page.rows.map(listing));
    const list = {
      href: `${OPERATOR_BASE}/apps`,
      search,
      later: query.after !== null,
      next: page.next,
      shown: apps.length,
    };
    return sendPage(reply, 200, appsPage(pageContext(deps, request), apps, list));
  });

  scope.post('/operator/apps', async (request, reply) => {
    const session = requireOperator(request);
    const name = requiredName(request.body, 'name', 'an app name');
    const alg = oneOf(request.body, 'alg', KEY_ALGORITHMS, 'a key algorithm');
    // Made before the transaction, which must not hold the database while the pair is generated.
    const keys = await generateKeyPair(alg);
    const created = await deps.db.transaction().execute(async (trx) => {
      const made = await createApp(trx, { name, alg, keys });
      await audit(consoleDb(trx), actorOf(session), 'app.created', {
        workspaceId: made.workspaceId,
        detail: `${name} (${made.app.id}), key ${made.kid} ${alg}`,
      });
      return made;
    });
    return sendPage(
      reply,
      201,
      appCreatedPage(pageContext(deps, request), {
        appId: created.app.id,
        name: created.app.name,
        kid: created.kid,
        alg: created.alg,
        workspaceId: created.workspaceId,
        workspaceKey: created.workspaceKey,
        installationId: created.installationId,
        privateKeyPem: created.privateKeyPem,
      }),
    );
  });

  const detail = async (app: AppRow): Promise<AppDetail> => {
    const [shown, installations, webhook] = await Promise.all([
      listing(app),
      listInstallations(deps.db, { appId: app.id }),
      getWebhook(deps.db, app.id).catch((err: unknown) => {
        if (err instanceof ProblemError && err.status === 404) return null;
        throw err;
      }),
    ]);
    return { ...shown, installations, webhook };
  };

  scope.get('/operator/apps/:appId', async (request, reply) => {
    requireOperator(request);
    const app = await getApp(deps.db, param(request.params, 'appId', APP_ID));
    const shown = await detail(app);
    // The notice after a change, only when true (the query is anyone's to write).
    const revoked = field(request.query, 'revoked');
    const isRevoked = shown.keys.some((k) => k.kid === revoked && k.revokedAt !== null);
    const webhookRemoved = field(request.query, 'done') === 'webhook-removed' && shown.webhook === null;
    const notice = isRevoked
      ? `Key ${revoked} is revoked.`
      : webhookRemoved
        ? 'The webhook is removed.'
        : null;
    return sendPage(reply, 200, appPage(pageContext(deps, request), shown, { notice }));
  });

  scope.post('/operator/apps/:appId/name', async (request, reply) => {
    const session = requireOperator(request);
    const app = await getApp(deps.db, param(request.params, 'appId', APP_ID));
    const name = field(request.body, 'name');
    await deps.db.transaction().execute(async (trx) => {
      const before = await renameApp(trx, app.id, name);
      await audit(consoleDb(trx), actorOf(session), 'app.renamed', {
        workspaceId: app.owner_workspace_id,
        detail: `${app.id}: ${before} → ${name.trim()}`,
      });
    });
    return reply.redirect(`${OPERATOR_BASE}/apps/${app.id}`, 303);
  });

  scope.post('/operator/apps/:appId/webhook', async (request, reply) => {
    const session = requireOperator(request);
    const app = await getApp(deps.db, param(request.params, 'appId', APP_ID));
    const url = field(request.body, 'url').trim();
    const events = checkedValues(request.body, 'event');
    try {
      if (events === null)
        throw problem('invalid', 'The events were not understood. Reload the page and try again.');
      // A form without any event ticked asks for none, which setWebhook refuses in words.
      // Not in a transaction: setWebhook resolves the URL's host first (the address policy), and a
      // transaction would hold the database (SQLite's write lock) for as long as DNS takes.
      const hook = await setWebhook(deps.db, app.id, url, {
        signingSecret: deps.signingSecret,
        allowlist: deps.config.webhooks.urlAllowlist,
        events,
      });
      await audit(consoleDb(deps.db), actorOf(session), 'app_webhook.set', {
        workspaceId: app.owner_workspace_id,
        detail: `${app.name} (${app.id}): ${hook.events.join(', ')}`,
      });
      return sendPage(
        reply,
        201,
        webhookSetPage(pageContext(deps, request), { appId: app.id, appName: app.name }, hook),
      );
    } catch (err) {
      if (!(err instanceof ProblemError) || err.status !== 400) throw err;
      const page = appPage(pageContext(deps, request), await detail(app), {
        notice: null,
        webhookError: { url, message: err.detail },
      });
      return sendPage(reply, 400, page);
    }
  });

  scope.get('/operator/apps/:appId/webhook/remove', async (request, reply) => {
    requireOperator(request);
    const app = await getApp(deps.db, param(request.params, 'appId', APP_ID));
    const hook = await getWebhook(deps.db, app.id);
    return sendPage(
      reply,
      200,
      removeWebhookPage(pageContext(deps, request), { appId: app.id, appName: app.name }, hook),
    );
  });

  scope.post('/operator/apps/:appId/webhook/remove', async (request, reply) => {
    const session = requireOperator(request);
    const app = await getApp(deps.db, param(request.params, 'appId', APP_ID));
    await deps.db.transaction().execute(async (trx) => {
      await removeWebhook(trx, app.id);
      await audit(consoleDb(trx), actorOf(session), 'app_webhook.removed', {
        workspaceId: app.owner_workspace_id,
        detail: `${app.name} (${app.id})`,
      });
    });
    return reply.redirect(`${OPERATOR_BASE}/apps/${app.id}?done=webhook-removed`, 303);
  });

  scope.post('/operator/apps/:appId/keys', async (request, reply) => {
    const session = requireOperator(request);
    const app = await getApp(deps.db, param(request.params, 'appId', APP_ID));
    const alg = oneOf(request.body, 'alg', KEY_ALGORITHMS, 'a key algorithm');
    // As `dx apps keys add`: the pair is made here, only the public half is stored.
    const pair = await generateKeyPair(alg);
    const key = await deps.db.transaction().execute(async (trx) => {
      const added = await addAppKey(trx, app.id, alg, pair.publicKeyPem);
      await audit(consoleDb(trx), actorOf(session), 'app_key.added', {
        workspaceId: app.owner_workspace_id,
        detail: `${app.name} (${app.id}), key ${added.kid} ${alg}`,
      });
      return added;
    });
    return sendPage(
      reply,
      201,
      keyAddedPage(pageContext(deps, request), {
        appId: app.id,
        appName: app.name,
        kid: key.kid,
        alg: key.alg,
        privateKeyPem: pair.privateKeyPem,
      }),
    );
  });

  scope.get('/operator/apps/:appId/keys/:kid/revoke', async (request, reply) => {
    requireOperator(request);
    const app = await getApp(deps.db, param(request.params, 'appId', APP_ID));
    const kid = param(request.params, 'kid', KID);
    const key = (await listAppKeys(deps.db, app.id)).find((k) => k.kid === kid && k.revoked_at === null);
    if (key === undefined) throw problem('notFound', `App ${app.name} has no active key ${kid}.`);
    return sendPage(
      reply,
      200,
      revokeKeyPage(pageContext(deps, request), { appId: app.id, appName: app.name, kid }),
    );
  });

  scope.post('/operator/apps/:appId/keys/:kid/revoke', async (request, reply) => {
    const session = requireOperator(request);
    const app = await getApp(deps.db, param(request.params, 'appId', APP_ID));
    const kid = param(request.params, 'kid', KID);
    await deps.db.transaction().execute(async (trx) => {
      await revokeAppKey(trx, app.id, kid);
      await audit(consoleDb(trx), actorOf(session), 'app_key.revoked', {
        workspaceId: app.owner_workspace_id,
        detail: `${app.name} (${app.id}), key ${kid}`,
      });
    });
    return reply.redirect(`${OPERATOR_BASE}/apps/${app.id}?revoked=${kid}`, 303);
  });

  // The private key's download: the result page's form posts back the key it shows, and gets it
  // as a file. The server never keeps a copy, so nothing is left to fetch later; it answers only
  // a well-formed private key, re-encoded by itself (never the posted bytes as they came).
  scope.post('/operator/private-key', async (request, reply) => {
    requireOperator(request);
    let pem: string;
    try {
      pem = createPrivateKey(field(request.body, 'pem')).export({ type: 'pkcs8', format: 'pem' }).toString();
    } catch {
      throw problem(
        'invalid',
        'That is not a private key. Go back to the page that showed it and try again.',
      );
    }
    const stem = field(request.body, 'file');
    const file = FILE_STEM.test(stem) ? stem : 'private-key';
    return reply
      .code(200)
      .type('application/x-pem-file')
      .header('content-disposition', `attachment; filename="${file}.pem"`)
      .send(pem);
  });
}
