// Every named component schema, registered once on the root instance (app.addSchema) so that
// routes refer to them with ref(); a new component must be listed here (docs/api.md).
import type { Component } from './components.js';
import { Problem } from './components.js';
import { UserSummary, WorkspaceSummary } from './common.js';
import {
  AppRef,
  ConnectedAppList,
  Dataset,
  DatasetList,
  DatasetProperty,
  DatasetSchema,
  DatasetTag,
  NewDatasetBody,
  NewDatasetProperty,
  NewDatasetSchema,
  PatchDatasetBody,
  ReportedSchemaChange,
  SchemaChange,
  SchemaChangeProperty,
  SchemaChangeReport,
  TagApp,
} from './datasets.js';
import {
  ClientToken,
  ClientTokenBody,
  ConnectInstallationBody,
  Installation,
  InstallationList,
  Me,
} from './identity.js';
import {
  ErrorData,
  ErrorsPage,
  Job,
  JobList,
  JobStatusEntry,
  JobStatusList,
  LogData,
  Progress,
  RecordsLoadBody,
  RowError,
  UploadJobResult,
  UploadUrlBody,
} from './jobs.js';
import { Record, RecordsPage, RetrieveBody, RetrieveResult } from './records.js';
import { ChangeEntry, ChangePage } from './changes.js';
import { HealthStatus, UploadReceived } from './platform.js';
import { DeliveriesPage, Delivery, SetWebhookBody, Webhook, WebhookWithSecret } from './webhooks.js';

export const COMPONENTS: readonly Component[] = [
  Problem,
  UserSummary,
  WorkspaceSummary,
  // identity
  Installation,
  InstallationList,
  ConnectInstallationBody,
  ClientTokenBody,
  ClientToken,
  Me,
  // datasets
  Dataset,
  DatasetList,
  DatasetSchema,
  DatasetProperty,
  DatasetTag,
  NewDatasetBody,
  NewDatasetSchema,
  NewDatasetProperty,
  PatchDatasetBody,
  SchemaChange,
  SchemaChangeProperty,
  SchemaChangeReport,
  ReportedSchemaChange,
  AppRef,
  TagApp,
  ConnectedAppList,
  // loading and jobs
  UploadUrlBody,
  RecordsLoadBody,
  UploadJobResult,
  UploadReceived,
  Job,
  JobList,
  JobStatusEntry,
  JobStatusList,
  LogData,
  ErrorData,
  RowError,
  ErrorsPage,
  Progress,
  // records
  Record,
  RecordsPage,
  RetrieveBody,
  RetrieveResult,
  ChangeEntry,
  ChangePage,
  // webhooks
  SetWebhookBody,
  Webhook,
  WebhookWithSecret,
  Delivery,
  DeliveriesPage,
  // platform
  HealthStatus,
  // NotificationReceived: added with its route, which is off unless STORAGE=s3 has a token.
];
