import { it } from 'node:test';
import assert from 'node:assert/strict';
import { routeLabel } from './metrics.js';

void it('labels routes as they are written, unmatched requests alike', () => {
  assert.equal(routeLabel('/api/v1/datasets/:id/records::load'), '/api/v1/datasets/:id/records:load');
  assert.equal(
    routeLabel('/api/v1/datasets/jobs/:jobId/logs::current'),
    '/api/v1/datasets/jobs/:jobId/logs:current',
  );
  assert.equal(
    routeLabel('/api/v1/apps/me/webhook/deliveries/:deliveryId(^[^:/]+)::redeliver'),
    '/api/v1/apps/me/webhook/deliveries/:deliveryId:redeliver',
  );
  assert.equal(routeLabel(undefined), 'unmatched');
});
