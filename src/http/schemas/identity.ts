// Schemas of installations, client tokens and /auth/me.
import { Type } from 'typebox';
import { PERMISSIONS, type Permission } from '../../domain/identity/access-tokens.js';
import { Timestamp, UserSummary, WorkspaceSummary } from './common.js';

export const Installation = Type.Object({
  installationId: Type.Integer(),
  platformAppId: Type.String(),
  workspaceId: Type.Integer(),
  createdBy: UserSummary,
  dateCreated: Timestamp,
  name: Type.String(),
});

export const ConnectInstallationBody = Type.Object({
  workspaceId: Type.Integer({ minimum: 1 }),
  workspaceKey: Type.String({ minLength: 1, maxLength: 200 }),
});

export const ClientTokenBody = Type.Object({
  tokenType: Type.Literal('appInstallation'),
  installationId: Type.Integer({ minimum: 1 }),
  workspaceKey: Type.String({ minLength: 1, maxLength: 200 }),
  permissions: Type.Optional(Type.Array(Type.String({ maxLength: 64 }), { maxItems: 16 })),
});

export const ClientToken = Type.Object({
  tokenType: Type.Literal('Bearer'),
  expiresAt: Timestamp,
  token: Type.String(),
});

export const Me = Type.Object({
  userId: Type.Integer(),
  displayName: Type.String(),
  email: Type.String(),
  platformAppId: Type.String(),
  workspace: WorkspaceSummary,
  permissions: Type.Array(Type.Unsafe<Permission>({ type: 'string', enum: [...PERMISSIONS] })),
});
