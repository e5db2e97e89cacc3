// Schemas of the root routes: health, the upload receiver's answer, storage notifications.
import { Type } from 'typebox';
import { component } from './components.js';

export const HealthStatus = component(
  'HealthStatus',
  Type.Object({ status: Type.String({ description: 'ok (/healthz) or ready (/readyz)' }) }),
);

export const UploadReceived = component(
  'UploadReceived',
  Type.Object(
    { datasetId: Type.String(), jobId: Type.String(), bytes: Type.Integer({ description: 'Bytes stored' }) },
    { description: 'The whole file is stored; its load job is queued' },
  ),
);

export const NotificationReceived = component(
  'StorageNotificationResult',
  Type.Object({
    received: Type.Integer({ description: 'object keys of this bucket named by the notification' }),
    queued: Type.Integer({ description: 'jobs queued because of it' }),
  }),
);
