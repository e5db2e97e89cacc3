// Each admission check alone, then the pipeline: order, the memo a keep-alive connection reuses,
// and an ID that must be looked up again.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  ADMISSION_CHECKS,
  checkAuthorization,
  checkBodyLimit,
  checkFraming,
  checkProxyId,
  checkRateLimit,
  ID_NOT_IN_MEMORY,
  lookUpProxyId,
  PASS,
  runChecks,
  type AdmissionRules,
  type Applicant,
  type CheckResult,
  type ProxyIdLookup,
} from './admission.js';
import { ConnectionMemo } from './client-side.js';
import { scanRequestHeaders } from './headers.js';
import { UNKNOWN_PROXY_ID } from './metrics.js';

const AUTH = `Basic ${Buffer.from('app:key|1').toString('base64')}`;
const ID = 'pv_AbC4eF9h_secretpart';

function applicant(headers: string[], url = '/v4/echoes', memo = new ConnectionMemo()): Applicant {
  return { scan: scanRequestHeaders(['Host', 'h', ...headers]), url, memo, proxyId: UNKNOWN_PROXY_ID };
}

const valid = (...more: string[]) => applicant(['Authorization', AUTH, 'X-PROXYVID', ID, ...more]);

class FakeIds implements ProxyIdLookup {
  generation = 1;
  lookups = 0;
  constructor(
    public known: Map<string, string>,
    public reloaded: Map<string, string> | Error = known,
  ) {}
  lookup(id: string): string | undefined {
    this.lookups++;
    return this.known.get(id);
  }
  lookupOrRefresh(id: string): Promise<string | undefined> {
    if (this.reloaded instanceof Error) return Promise.reject(this.reloaded);
    this.known = this.reloaded;
    this.generation++;
    return Promise.resolve(this.known.get(id));
  }
}

function rules(over: Partial<AdmissionRules> = {}): AdmissionRules & { taken: string[] } {
  const taken: string[] = [];
  return {
    proxyIds: new FakeIds(new Map([[ID, 'pv_AbC4eF9h']])),
    rateLimit: { take: (key) => (taken.push(key), 0) },
    bodyLimitBytes: 1000,
    taken,
    ...over,
  };
}

/** The refusal's status and whether it ends the connection; 'pass' or 'lookup' otherwise. */
function outcome(r: CheckResult): string {
  if (r === PASS) return 'pass';
  if (r === ID_NOT_IN_MEMORY) return 'lookup';
  return `${r.problem.status}${r.endsConnection ? ' close' : ''}`;
}

void describe('admission checks', () => {
  void it('framing: only a path target is forwarded', () => {
    assert.equal(outcome(checkFraming(valid())), 'pass');
    for (const url of ['http://elsewhere.test/x', '*', ''])
      assert.equal(outcome(checkFraming(applicant([], url))), '400', url);
  });

  void it('authorization: well formed, else 401; a large unread body closes the connection', () => {
    assert.equal(outcome(checkAuthorization(valid())), 'pass');
    assert.equal(outcome(checkAuthorization(applicant([]))), '401');
    assert.equal(outcome(checkAuthorization(applicant(['Authorization', 'Bearer x']))), '401');
    // Sent twice: ambiguous.
    assert.equal(
      outcome(checkAuthorization(applicant(['Authorization', AUTH, 'Authorization', AUTH]))),
      '401',
    );
    assert.equal(outcome(checkAuthorization(applicant(['Content-Length', '100000']))), '401 close');
    assert.equal(outcome(checkAuthorization(applicant(['Transfer-Encoding', 'chunked']))), '401 close');
    assert.equal(outcome(checkAuthorization(applicant(['Content-Length', '100']))), '401');
  });

  void it('authorization: a value this connection proved is not checked again', () => {
    const memo = new ConnectionMemo();
    const first = applicant(['Authorization', AUTH], '/', memo);
    assert.equal(outcome(checkAuthorization(first)), 'pass');
    assert.equal(memo.authorization, AUTH);
    // A refused value is not remembered.
    assert.equal(outcome(checkAuthorization(applicant(['Authorization', 'Basic x'], '/', memo))), '401');
    assert.equal(memo.authorization, AUTH);
  });

  void it('proxy ID: active passes and sets the prefix; missing or ambiguous is 400 naming the header', () => {
    const r = rules();
    const a = valid();
    assert.equal(outcome(checkProxyId(a, r)), 'pass');
    assert.equal(a.proxyId, 'pv_AbC4eF9h');
    const missing = checkProxyId(applicant([]), r);
    assert.equal(outcome(missing), '400');
    assert.match(missing !== PASS && missing !== ID_NOT_IN_MEMORY ? missing.problem.title : '', /X-PROXYVID/);
    const mig = checkProxyId(applicant(['X-MIGVID', ID, 'X-MIGVID', ID]), r);
    assert.match(mig !== PASS && mig !== ID_NOT_IN_MEMORY ? mig.problem.title : '', /X-MIGVID/);
    assert.equal(outcome(checkProxyId(applicant(['X-PROXYVID', 'pv_other']), r)), 'lookup');
  });

  void it('proxy ID: the same ID on the same connection is answered from the memo until the set changes', () => {
    const ids = new FakeIds(new Map([[ID, 'pv_AbC4eF9h']]));
    const r = rules({ proxyIds: ids });
    const memo = new ConnectionMemo();
    const ask = () => checkProxyId(applicant(['X-PROXYVID', ID], '/', memo), r);
    assert.equal(outcome(ask()), 'pass');
    assert.equal(outcome(ask()), 'pass');
    assert.equal(ids.lookups, 1);
    ids.generation++;
    ids.known = new Map();
    assert.equal(outcome(ask()), 'lookup');
  });

  void it('rate limit: takes from the bucket of the prefix; a wait is 429 with Retry-After', () => {
    const r = rules({ rateLimit: { take: () => 3 } });
    const a = valid();
    a.proxyId = 'pv_AbC4eF9h';
    const refused = checkRateLimit(a, r);
    assert.equal(outcome(refused), '429');
    assert.equal(
      refused !== PASS && refused !== ID_NOT_IN_MEMORY && refused.problem.headers['retry-after'],
      '3',
    );
    const open = rules();
    assert.equal(outcome(checkRateLimit(a, open)), 'pass');
    assert.deepEqual(open.taken, ['pv_AbC4eF9h']);
  });

  void it('body limit: a declared length over the limit is 413 and closes; chunked passes (counted later)', () => {
    const r = rules();
    assert.equal(outcome(checkBodyLimit(valid('Content-Length', '1000'), r)), 'pass');
    assert.equal(outcome(checkBodyLimit(valid('Content-Length', '1001'), r)), '413 close');
    assert.equal(outcome(checkBodyLimit(valid('Transfer-Encoding', 'chunked'), r)), 'pass');
  });
});

void describe('admission pipeline', () => {
  void it('runs framing, authorization, proxy ID, rate limit, body limit in that order', () => {
    assert.deepEqual(
      ADMISSION_CHECKS.map((c) => c.name),
      ['framing', 'authorization', 'proxyId', 'rateLimit', 'bodyLimit'],
    );
    const r = rules();
    // Refused by an earlier check: no token is taken.
    assert.equal(outcome(runChecks(applicant(['X-PROXYVID', ID]), r)), '401');
    assert.equal(outcome(runChecks(valid('Content-Length', '5000'), r)), '413 close');
    assert.deepEqual(r.taken, ['pv_AbC4eF9h']);
    assert.equal(outcome(runChecks(valid(), r)), 'pass');
  });

  void it('an ID created since the last reload is found by looking it up again, then the rest run', async () => {
    const fresh = 'pv_NewOne12_secret';
    const r = rules({ proxyIds: new FakeIds(new Map(), new Map([[fresh, 'pv_NewOne12']])) });
    const a = applicant(['Authorization', AUTH, 'X-PROXYVID', fresh, 'Content-Length', '2000']);
    assert.equal(outcome(runChecks(a, r)), 'lookup');
    // The checks after the ID's still run: here the body limit refuses.
    assert.equal(outcome(await lookUpProxyId(a, r)), '413 close');
    assert.equal(a.proxyId, 'pv_NewOne12');
    assert.equal(a.memo.proxyId, fresh);
    assert.deepEqual(r.taken, ['pv_NewOne12']);
  });

  void it('an ID still unknown after the lookup, or a failed reload, is refused', async () => {
    const unknown = applicant(['Authorization', AUTH, 'X-PROXYVID', 'pv_nope']);
    assert.equal(outcome(await lookUpProxyId(unknown, rules({ proxyIds: new FakeIds(new Map()) }))), '400');
    const failing = rules({ proxyIds: new FakeIds(new Map(), new Error('db down')) });
    assert.equal(outcome(await lookUpProxyId(unknown, failing)), '400');
  });
});
