// The operator's accounts: every console account, found by email or name, 50 to a page; disable
// or enable one, grant or take back operator rights (domain/console/accounts.ts).
import type { FastifyInstance } from 'fastify';
import type { ApiDeps } from '../../deps.js';
import { problem } from '../../../errors.js';
import { changeAccount, listAccounts, type AccountChange } from '../../../domain/console/accounts.js';
import { audit, type AuditAction } from '../../../domain/console/audit.js';
import { consoleDb, type ConsoleDb } from '../../../domain/console/db.js';
import { pageContext, sendPage } from './context.js';
import { field } from './form.js';
import { namePageQuery } from './name-lists.js';
import { actorOf, NOT_FOUND, param, requireOperator } from './operator-common.js';
import {
  accountChangeAt,
  accountsPage,
  ACCOUNT_CHANGES,
  OPERATOR_BASE,
  OPERATOR_LIST_PAGE,
} from './pages-operator.js';

const ACCOUNT_ID = /^[1-9]\d{0,14}$/;

/** What each change writes to the audit log. */
const AUDITED: Record<AccountChange, AuditAction> = {
  disable: 'account.disabled',
  enable: 'account.enabled',
  grantOperator: 'operator.granted',
  revokeOperator: 'operator.revoked',
};

/** /console/operator/accounts… */
export function operatorAccountRoutes(scope: FastifyInstance, deps: ApiDeps, db: ConsoleDb): void {
  scope.get('/operator/accounts', async (request, reply) => {
    const session = requireOperator(request);
    const { search, query } = namePageQuery(request.query, OPERATOR_LIST_PAGE);
    const page = await listAccounts(db, query);
    const list = {
      href: `${OPERATOR_BASE}/accounts`,
      search,
      later: query.after !== null,
      next: page.next,
      shown: page.rows.length,
    };
    const change = accountChangeAt(field(request.query, 'done'));
    return sendPage(
      reply,
      200,
      accountsPage(pageContext(deps, request), page.rows, list, {
        self: session.account.id,
        notice: change !== undefined ? ACCOUNT_CHANGES[change].done : null,
      }),
    );
  });

  scope.post('/operator/accounts/:accountId/:change', async (request, reply) => {
    const session = requireOperator(request);
    const accountId = Number(param(request.params, 'accountId', ACCOUNT_ID));
    const change = accountChangeAt((request.params as { change?: string }).change);
    if (change === undefined) throw problem('notFound', NOT_FOUND);
    await deps.db.transaction().execute(async (trx) => {
      const email = await changeAccount(consoleDb(trx), accountId, change, session.account.id);
      await audit(consoleDb(trx), actorOf(session), AUDITED[change], { detail: email });
    });
    return reply.redirect(`${OPERATOR_BASE}/accounts?done=${ACCOUNT_CHANGES[change].path}`, 303);
  });
}
