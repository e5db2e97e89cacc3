// The operator's proxy IDs: list, create (shown once), revoke after a confirmation page. The same
// store as `dx proxy-ids` and the proxy's request check (domain/identity/proxy-ids.ts).
import type { FastifyInstance } from 'fastify';
import { problem } from '../../../errors.js';
import type { ApiDeps } from '../../deps.js';
import { audit } from '../../../domain/console/audit.js';
import { consoleDb } from '../../../domain/console/db.js';
import { SqlProxyIdStore, type ProxyIdInfo } from '../../../domain/identity/proxy-ids.js';
import { pageContext, sendPage } from './context.js';
import { field } from './form.js';
import { actorOf, param, requiredName, requireOperator } from './operator-common.js';
import { OPERATOR_BASE, proxyIdCreatedPage, proxyIdsPage, revokeProxyIdPage } from './pages-operator.js';

/** A proxy ID's prefix: the mark and its first 8 random characters (never the whole ID in a URL). */
const PREFIX = /^pv_[A-Za-z0-9_-]{8}$/;

/** /console/operator/proxy-ids… */
export function operatorProxyIdRoutes(scope: FastifyInstance, deps: ApiDeps): void {
  const store = new SqlProxyIdStore(deps.db);

  const byPrefix = async (params: unknown): Promise<ProxyIdInfo> => {
    const prefix = param(params, 'prefix', PREFIX);
    const info = (await store.list()).find((p) => p.prefix === prefix);
    if (info === undefined) throw problem('notFound', `There is no proxy ID ${prefix}.`);
    return info;
  };

  scope.get('/operator/proxy-ids', async (request, reply) => {
    requireOperator(request);
    const [list, lastUses] = await Promise.all([store.list(), store.lastUses()]);
    // The notice after a revocation, only when true (the query is anyone's to write).
    const revoked = field(request.query, 'revoked');
    const isRevoked = list.some((p) => p.prefix === revoked && p.revokedAt !== null);
    return sendPage(
      reply,
      200,
      proxyIdsPage(pageContext(deps, request), list, {
        lastUses,
        notice: isRevoked ? `Proxy ID ${revoked} is revoked.` : null,
      }),
    );
  });

  scope.post('/operator/proxy-ids', async (request, reply) => {
    const session = requireOperator(request);
    const name = requiredName(request.body, 'name', 'who the proxy ID is for');
    const { id, info } = await deps.db.transaction().execute(async (trx) => {
      const made = await new SqlProxyIdStore(trx).create(name);
      await audit(consoleDb(trx), actorOf(session), 'proxy_id.created', {
        detail: `${made.info.prefix} (${made.info.name})`,
      });
      return made;
    });
    return sendPage(reply, 201, proxyIdCreatedPage(pageContext(deps, request), id, info));
  });

  scope.get('/operator/proxy-ids/:prefix/revoke', async (request, reply) => {
    requireOperator(request);
    const info = await byPrefix(request.params);
    if (info.revokedAt !== null)
      return reply.redirect(`${OPERATOR_BASE}/proxy-ids?revoked=${info.prefix}`, 303);
    const refreshSeconds = Math.ceil(deps.config.proxy.idRefreshMs / 1000);
    return sendPage(reply, 200, revokeProxyIdPage(pageContext(deps, request), info, refreshSeconds));
  });

  scope.post('/operator/proxy-ids/:prefix/revoke', async (request, reply) => {
    const session = requireOperator(request);
    const info = await byPrefix(request.params);
    // Revoking is idempotent; only the revocation that happened is written to the log.
    if (info.revokedAt === null)
      await deps.db.transaction().execute(async (trx) => {
        await new SqlProxyIdStore(trx).revoke(info.prefix);
        await audit(consoleDb(trx), actorOf(session), 'proxy_id.revoked', {
          detail: `${info.prefix} (${info.name})`,
        });
      });
    return reply.redirect(`${OPERATOR_BASE}/proxy-ids?revoked=${info.prefix}`, 303);
  });
}
